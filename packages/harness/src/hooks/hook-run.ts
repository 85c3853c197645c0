/**
 * One call of a hook walking its taps in order: the one tap walker, for runs,
 * `hook.promise(...)` and `rein check`'s explain mode alike. Each tap is called
 * through the driver's `invoke` (under its own deadline and the run's signal, as
 * one ledger record re-aimed at each async tap: one promise per hook call); here
 * each answer is validated against the hook table, the failure policy applied, the
 * answer attributed to the tap (its name) and the decision trail written. A tap
 * cancelled by an abort is not the plugin's failure: a gate or permission answer is
 * a deny by `harness`, a transform ends the run `aborted`.
 *
 * Explain mode (`TapCall.explain`, `rein check` only, never a run): after the
 * deciding deny the later gate taps are still asked, with a fresh reduction that
 * cannot reach the decided verdict; their steps join the trail `consulted: false`.
 *
 * Invariants: taps run one at a time in the order of `hook.taps` read at the start;
 * a tap given up on (timeout, abort) is ignored when it answers late; every failure
 * that escapes is a `HarnessError` naming plugin and hook.
 */
import { HarnessError, HarnessErrorCode, pluginFailure } from "../errors.js";
import type { DecisionStep } from "../session/entries.js";
import { HOOK_TABLE, type HookName, type HookSpec, stricter } from "./hook-table.js";
import type { AttributedVerdict, GateDecision, HookContext, ToolHookContext } from "./hook-types.js";
import { PENDING, PluginDriver, Reactions, THREW, type TrackedCall } from "./plugin-driver.js";

export interface FailurePolicy {
  /** Default per-tap timeout in ms (hooks may override it in the table; taps with `timeout`). Default 30 000. */
  tapTimeoutMs: number;
  /** What a throwing or timed-out gate tap answers. Default `deny`; never `allow`. */
  gate: Exclude<GateDecision, "allow">;
  /** `fail-run` (default): a throwing transform fails the run. `skip-tap`: report it and keep the payload. */
  transform: "fail-run" | "skip-tap";
}

export interface HookEnvironment {
  driver: PluginDriver;
  policy(): FailurePolicy;
  /** Surfaces a plugin failure that was absorbed by policy (a `plugin_error` event). */
  report(failure: HarnessError): void;
}

/** A registered tap as Tapable stores it. */
export interface RawTap {
  name: string;
  type: "sync" | "async" | "promise";
  // biome-ignore lint/complexity/noBannedTypes: Tapable's own type for tap functions.
  fn: Function;
  stage?: number;
  timeout?: number;
}

/** What one hook call needs besides its taps, payload and context. */
export interface TapCall {
  name: HookName;
  spec: HookSpec<HookName>;
  env: HookEnvironment;
  /** Where each tap's part goes, in order (tool decisions with `decisions.trail` only). */
  trail?: DecisionStep[] | undefined;
  /** Explain mode: ask the gate taps after the deciding deny (see the header). */
  explain?: boolean;
}

type TrailHook = DecisionStep["hook"];

const ignore = (): void => undefined;
const IDLE_POLICY: FailurePolicy = { tapTimeoutMs: 30_000, gate: "deny", transform: "fail-run" };

export class HookRun implements TrackedCall {
  /** FAST PATH: an idle walker kept alive for V8's sake (see `PluginDriver.resident`). */
  static readonly resident: HookRun = HookRun.idle();

  private static idle(): HookRun {
    const env: HookEnvironment = { driver: new PluginDriver(), policy: () => IDLE_POLICY, report: ignore };
    const spec = HOOK_TABLE.toolResult as HookSpec<HookName>;
    const run = new HookRun({ name: "toolResult", spec, env }, [], undefined, undefined as never);
    run.reactions = new Reactions(env.driver, run);
    return run;
  }

  // The ledger's view (TrackedCall): the tap being waited for, its start and deadline.
  plugin = "";
  readonly hook: HookName;
  readonly toolCallId: string | undefined;
  readonly signal: AbortSignal | undefined;
  startedAt = Number.NaN;
  deadline = Number.POSITIVE_INFINITY;
  timeoutMs = Number.POSITIVE_INFINITY;
  value: PromiseLike<unknown> | undefined = undefined;
  error: unknown = undefined;
  reactions: TrackedCall["reactions"] = undefined;
  prev: TrackedCall | undefined = undefined;
  next: TrackedCall | undefined = undefined;
  running = false;

  private index = 0;
  /** The waterfall's current payload; a bail or gate payload never changes. */
  private payload: unknown;
  private tap: RawTap | undefined = undefined;
  /** The gate's running reduction: the strictest non-deny verdict so far. */
  private strictest: AttributedVerdict | undefined = undefined;
  /** Where steps go: the caller's trail, or (explain mode, after the deny) the consulted-later list. */
  private trail: DecisionStep[] | undefined;
  /** Explain mode: the verdict that decided, while later taps are asked. */
  private decided: AttributedVerdict | undefined = undefined;
  private denied = false;
  private resolve: (result: unknown) => void = ignore;
  private reject: (error: unknown) => void = ignore;

  constructor(
    private readonly call: TapCall,
    private readonly taps: readonly RawTap[],
    payload: unknown,
    private readonly context: HookContext,
  ) {
    this.hook = call.name;
    this.payload = payload;
    this.trail = call.trail;
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

  /** The waited-for tap answered. */
  answered(result: unknown): void {
    this.step(false, result, this.tap as RawTap);
  }

  /** The waited-for tap's promise rejected. */
  failed(error: unknown): void {
    this.step(true, error, this.tap as RawTap);
  }

  /**
   * The driver gave up on the waited-for tap (timeout, abort). The walk goes on
   * in a microtask, never inside the driver's timer or abort listener (which
   * are iterating the ledger).
   */
  fail(error: HarnessError): void {
    const tap = this.tap as RawTap;
    queueMicrotask(() => this.step(true, error, tap));
  }

  /** Folds the waited-for tap's answer (or failure) in and walks on. */
  private step(failed: boolean, value: unknown, tap: RawTap): void {
    try {
      const outcome = failed ? this.onFailure(tap, value) : this.onResult(tap, value);
      if (this.take(outcome)) {
        this.resolve(outcome);
        return;
      }
      const next = this.advance();
      if (next !== PENDING) this.resolve(next);
    } catch (error) {
      this.reject(error);
    }
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
    return this.finish();
  }

  private finish(): unknown {
    const reduction = this.call.spec.reduction;
    if (reduction === "waterfall") return this.payload;
    if (this.decided !== undefined) {
      for (const step of this.trail ?? []) this.call.trail?.push({ ...step, consulted: false });
      return this.decided;
    }
    return reduction === "gate" ? this.strictest : undefined;
  }

  /** Folds one tap's outcome in; true when it decides the call (a bail answer, a gate deny). */
  private take(outcome: unknown): boolean {
    if (outcome === undefined) return false;
    if (this.call.spec.reduction === "waterfall") {
      this.payload = outcome;
      return false;
    }
    if (this.decided !== undefined) return false; // explain mode: later answers never decide
    if (this.call.explain && this.denied && this.index < this.taps.length) {
      // Explain mode: the deny stands; the later taps are asked with a fresh reduction.
      this.decided = outcome as AttributedVerdict;
      this.strictest = undefined;
      this.trail = [];
      return false;
    }
    return true;
  }

  /** Calls one tap through the driver: its outcome when it answered synchronously, `PENDING` while waited for. */
  private ask(tap: RawTap): unknown {
    const call = this.call;
    this.plugin = tap.name;
    this.tap = tap;
    // The tap's own deadline (exact, whatever ran before it) and the run's signal bound the wait.
    const timeoutMs = tap.timeout ?? call.spec.timeoutMs ?? call.env.policy().tapTimeoutMs;
    const style = tap.type === "async" ? "callback" : "return";
    const value = call.env.driver.invoke(
      this,
      tap.fn,
      undefined,
      this.payload,
      this.context,
      timeoutMs,
      style,
    );
    if (value === PENDING) return PENDING;
    if (value === THREW) return this.onFailure(tap, this.error);
    return this.onResult(tap, value);
  }

  // ---- one tap's answer: validation, attribution, failure policy, trail ----

  private onResult(tap: RawTap, result: unknown): unknown {
    const call = this.call;
    if (result === undefined || result === null) {
      if (this.trail) this.note(tap.name, "no opinion");
      return undefined;
    }
    const problem = call.spec.validate(result, this.payload as never);
    if (problem) {
      const malformed = new HarnessError(
        HarnessErrorCode.hook,
        `plugin "${tap.name}" returned a malformed result from ${call.name}: ${problem}`,
        { plugin: tap.name, hook: call.name, toolCallId: this.toolCallId, pluginCode: "malformed_result" },
      );
      return this.onFailure(tap, malformed);
    }
    const reduction = call.spec.reduction;
    if (reduction === "waterfall") {
      if (this.trail) this.noteTransform(tap.name, result);
      return result;
    }
    if (reduction === "bail") {
      const answer = result as { decision?: unknown; reason?: unknown };
      if (this.trail) {
        const reason = typeof answer.reason === "string" ? answer.reason : undefined;
        this.note(tap.name, answer.decision as DecisionStep["answer"], reason);
      }
      return { ...(result as object), by: tap.name };
    }
    return this.reduceGate(result as AttributedVerdict, tap);
  }

  private onFailure(tap: RawTap, error: unknown): unknown {
    const call = this.call;
    const failure = pluginFailure(error, this);
    const policy = call.env.policy();
    if (this.trail) this.note(tap.name, "error", failureOutcome(call, failure, policy));
    if (failure.code === HarnessErrorCode.aborted) {
      // The run was aborted while the tap waited: not the plugin's fault, never reported, never skipped.
      if (call.spec.failure !== "fail-closed") throw failure;
      // A deny bails out of the gate and answers a permission request: the call never runs.
      return {
        decision: "deny",
        reason: `the run was aborted while "${tap.name}" was deciding`,
        by: "harness",
      };
    }
    if (call.spec.failure === "fail-closed") {
      call.env.report(failure);
      const reason = `${failure.message} (failing closed)`;
      if (call.name === "permissionAsk") return { decision: "deny", reason, by: tap.name };
      // The failure is already in the trail as an `error` step.
      return this.reduceGate({ decision: policy.gate, reason, by: tap.name }, tap, false);
    }
    if (policy.transform === "skip-tap" && call.spec.reduction === "waterfall") {
      call.env.report(failure);
      return undefined;
    }
    throw failure;
  }

  private reduceGate(verdict: AttributedVerdict, tap: RawTap, step = true): AttributedVerdict | undefined {
    const by = verdict.rule ? `${tap.name}:${verdict.rule}` : tap.name;
    if (step && this.trail) this.note(by, verdict.decision, verdict.reason);
    const attributed: AttributedVerdict = { ...verdict, by };
    // Bail on deny: nothing after it can undo it, so nothing after it runs (outside explain mode).
    if (attributed.decision === "deny") {
      this.denied = true;
      return attributed;
    }
    this.strictest = stricter(this.strictest, attributed);
    return undefined;
  }

  /** Appends one step; `reason` and `args` only when there is one. */
  private note(by: string, answer: DecisionStep["answer"], reason?: string, args?: unknown): void {
    const step: DecisionStep = { hook: this.call.name as TrailHook, by, answer };
    if (reason !== undefined) step.reason = reason;
    if (args !== undefined) step.args = args;
    this.trail?.push(step);
  }

  /** A `toolCall` tap's step: `rewrite` with the new arguments, or `no opinion` when it kept them. */
  private noteTransform(tapName: string, result: unknown): void {
    const before = (this.payload as { args?: unknown }).args;
    const after = (result as { args?: unknown }).args;
    if (after === before) this.note(tapName, "no opinion");
    else this.note(tapName, "rewrite", undefined, after);
  }
}

/** A failure's step reason: what went wrong and what the hook's failure policy made of it. */
function failureOutcome(call: TapCall, failure: HarnessError, policy: FailurePolicy): string {
  if (call.spec.failure === "fail-closed") {
    const verdict =
      call.name === "permissionAsk" || failure.code === HarnessErrorCode.aborted ? "deny" : policy.gate;
    return `${failure.message} (failing closed: ${verdict})`;
  }
  if (
    failure.code !== HarnessErrorCode.aborted &&
    policy.transform === "skip-tap" &&
    call.spec.reduction === "waterfall"
  ) {
    return `${failure.message} (tap skipped)`;
  }
  return `${failure.message} (the run fails)`;
}
