/**
 * One call of a hook walking its taps in order: the engine of the runners in
 * create-hooks.ts. Each tap runs through tap-call.ts (`invoke`, `onResult`,
 * `onFailure`: failure policy, validation, attribution, trail); what differs
 * from calling `callTap` per tap is the cost of waiting for an async tap.
 *
 * The call is one record of the PluginDriver's ledger for its whole life,
 * re-aimed at each async tap's promise (`driver.waitFor`): the watchdog sees
 * that tap's own deadline (counted from that tap's start, so a slow tap
 * before it never shortens it; the driver reads the clock once per drain, not
 * per tap), the run's abort signal reaches it through the driver's one
 * listener, and a tap given up on stays named in the ledger until it settles. A tap's promise gets one `.then` with the call's shared
 * reactions, which continue the walk in that same reaction: no promise, site,
 * options or closure per tap, and one promise per hook call (the caller's).
 *
 * Invariants: taps run one at a time, in the order of the live `hook.taps`
 * array read at the start; at most one tap is waited for; a tap given up on
 * (timeout, abort) leaves its reactions dead, so its late answer is ignored;
 * a failure the policy does not absorb rejects the call's promise, never
 * escapes as an unhandled rejection.
 */
import type { HarnessError } from "../errors.js";
import { HOOK_TABLE, type HookName, type HookSpec } from "./hook-table.js";
import type { HookContext, ToolHookContext } from "./hook-types.js";
import { abortedWhile, isThenable, type TrackedCall } from "./plugin-driver.js";
import { invoke, onFailure, onResult, type RawTap, type TapCall } from "./tap-call.js";

/** `ask`'s answer while a tap's promise is pending. */
const PENDING: unique symbol = Symbol("pending");
const ignore = (): void => undefined;

/** The reactions a waited-for tap's promise gets; giving up on a tap kills the pair it was given. */
class TapReactions {
  live = true;
  constructor(private readonly run: HookRun) {}
  readonly answered = (result: unknown): void => {
    if (this.live) this.run.answered(result);
  };
  readonly failed = (error: unknown): void => {
    if (this.live) this.run.failed(error);
  };
}

export class HookRun implements TrackedCall {
  // The ledger's view (TrackedCall): the tap being waited for, its start and deadline.
  plugin = "";
  readonly hook: HookName;
  readonly toolCallId: string | undefined;
  readonly signal: AbortSignal | undefined;
  // Start as doubles, as Date.now() values are: a field changing representation changes the shape.
  startedAt = Number.NaN;
  deadline = Number.POSITIVE_INFINITY;
  timeoutMs = Number.POSITIVE_INFINITY;
  value: PromiseLike<unknown> | undefined = undefined;
  prev: TrackedCall | undefined = undefined;
  next: TrackedCall | undefined = undefined;
  running = false;

  private index = 0;
  /** The waterfall's current payload; a bail or gate payload never changes. */
  private payload: unknown;
  private tap: RawTap | undefined = undefined;
  private reactions: TapReactions | undefined = undefined;
  private resolve: (result: unknown) => void = ignore;
  private reject: (error: unknown) => void = ignore;

  /**
   * One idle run (with its reactions) for the life of the module. V8 holds an
   * instance's final shape (map) only through live instances: after a GC with
   * no hook call in flight it would drop it and throw away every optimised
   * function that relies on it (deopt "weak objects"), so each full GC would
   * send the runners back through the interpreter and the compiler.
   */
  static readonly resident: HookRun = HookRun.idle();

  private static idle(): HookRun {
    const call: TapCall = {
      name: "toolResult",
      spec: HOOK_TABLE.toolResult as HookSpec<HookName>,
      env: undefined as never,
    };
    const run = new HookRun(call, [], undefined, undefined as never);
    run.reactions = new TapReactions(run);
    return run;
  }

  constructor(
    private readonly call: TapCall,
    private readonly taps: RawTap[],
    payload: unknown,
    private readonly context: HookContext,
  ) {
    this.hook = call.name;
    this.payload = payload;
    this.signal = context?.signal;
    this.toolCallId = (context as Partial<ToolHookContext> | undefined)?.call?.id;
  }

  /** Runs the taps; resolves with the reduction (next payload, attributed answer, strictest verdict). */
  start(): Promise<unknown> {
    let outcome: unknown;
    try {
      outcome = this.advance();
    } catch (error) {
      return Promise.reject(error);
    }
    if (outcome !== PENDING) return Promise.resolve(outcome);
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The waited-for tap answered (its promise's reaction). */
  answered(result: unknown): void {
    this.call.env.driver.settled(this);
    try {
      this.continueWith(onResult(this.call, this.tap as RawTap, this, result, this.payload, this.context));
    } catch (error) {
      this.reject(error);
    }
  }

  /** The waited-for tap's promise rejected. */
  failed(error: unknown): void {
    this.call.env.driver.settled(this);
    try {
      this.continueWith(onFailure(this.call, this.tap as RawTap, this, error, this.context));
    } catch (thrown) {
      this.reject(thrown);
    }
  }

  /**
   * The driver gave up on the waited-for tap (timeout, abort); it is already
   * off the running list and kept as abandoned. The walk goes on in a microtask,
   * never inside the driver's timer or abort listener (which are iterating the ledger).
   */
  fail(error: HarnessError): void {
    if (this.reactions) this.reactions.live = false;
    this.reactions = undefined;
    const tap = this.tap as RawTap;
    queueMicrotask(() => {
      try {
        this.continueWith(onFailure(this.call, tap, this, error, this.context));
      } catch (thrown) {
        this.reject(thrown);
      }
    });
  }

  private continueWith(outcome: unknown): void {
    if (this.take(outcome)) {
      this.resolve(outcome);
      return;
    }
    const next = this.advance();
    if (next !== PENDING) this.resolve(next);
  }

  /** Runs taps until one is pending (`PENDING`) or the call is decided (its result). */
  private advance(): unknown {
    const taps = this.taps;
    while (this.index < taps.length) {
      if (this.hook === "beforeRun" && (this.payload as { block?: unknown }).block) break;
      const outcome = this.ask(taps[this.index++] as RawTap);
      if (outcome === PENDING) return PENDING;
      if (this.take(outcome)) return outcome;
    }
    const reduction = this.call.spec.reduction;
    if (reduction === "waterfall") return this.payload;
    return reduction === "gate" ? this.call.gate?.strictest : undefined;
  }

  /** Folds one tap's outcome in; true when it decides the call (a bail answer, a gate deny). */
  private take(outcome: unknown): boolean {
    if (outcome === undefined) return false;
    if (this.call.spec.reduction !== "waterfall") return true;
    this.payload = outcome;
    return false;
  }

  /** Calls one tap: its outcome when it answered synchronously, `PENDING` while its promise is waited for. */
  private ask(tap: RawTap): unknown {
    const { call, context } = this;
    this.plugin = tap.name;
    let value: unknown;
    try {
      value = invoke(tap, this.payload, context);
    } catch (error) {
      return onFailure(call, tap, this, error, context);
    }
    if (!isThenable(value)) return onResult(call, tap, this, value, this.payload, context);
    // The tap's own deadline (exact, whatever ran before it) and the run's signal bound the wait.
    const timeoutMs = tap.timeout ?? call.spec.timeoutMs ?? call.env.policy().tapTimeoutMs;
    if (!call.env.driver.waitFor(this, value, timeoutMs)) {
      return onFailure(call, tap, this, abortedWhile(this, this.signal as AbortSignal), context);
    }
    this.tap = tap;
    if (this.reactions === undefined) this.reactions = new TapReactions(this);
    value.then(this.reactions.answered, this.reactions.failed);
    return PENDING;
  }
}
