/**
 * The one place plugin code is called (as Rollup's `PluginDriver.runHook`): taps, a
 * tool's `inspect` and `execute`, listeners, a default-verdict function, a plugin's
 * `setup`, `rules` and cleanups all go through `invoke` (`run`: `invoke` for one
 * call). Also the harness's one timer system and one in-flight ledger.
 *
 * Invariants: every failure is a `HarnessError` tagged once with plugin, hook and
 * tool call (the plugin's own `code` kept as `pluginCode`), a synchronous throw or
 * a non-promise return never escapes as an unhandled rejection; every asynchronous
 * call is tracked until it settles, also after its caller stopped waiting (timeout,
 * abort), so shutdown can name a hung one; each call's deadline is never early: one
 * shared watchdog timer is armed for the earliest deadline in flight, and a call's
 * clock starts when the synchronous stretch that started it ends (one clock read per
 * microtask drain: a read costs as much as a pass-through tap); a call waiting
 * under an `AbortSignal` stops waiting (code `aborted`) the moment it aborts (one
 * listener per signal). A synchronous result is not tracked, and the timer is only
 * unref'd, never cleared, when the ledger empties: fast calls cost no timer work.
 */
import { HarnessError, HarnessErrorCode, pluginFailure } from "../errors.js";

export interface PluginCallSite {
  plugin: string;
  hook: string;
  toolCallId?: string;
}

export interface PluginCallOptions {
  /** Milliseconds before the call counts as failed; `undefined` or `Infinity` waits forever. */
  timeoutMs?: number;
  /** Stops waiting (rejects with code `aborted`) when this signal aborts. */
  signal?: AbortSignal;
}

export interface InFlightCall extends PluginCallSite {
  startedAt: number;
  settled: Promise<unknown>;
}

/**
 * One waiting caller in the ledger. A hook call walking its taps is one such
 * record for its whole life, re-aimed at each tap's promise (`invoke`): its
 * site names the tap being waited for, `startedAt` / `deadline` are that tap's.
 */
export interface TrackedCall extends PluginCallSite {
  /** When the wait started; `NaN` until stamped after the current drain. */
  startedAt: number;
  deadline: number;
  /** The allowance `deadline` is computed from once `startedAt` is stamped. */
  timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  value: PromiseLike<unknown> | undefined;
  /** The tagged failure `invoke` returned `THREW` for. */
  error: unknown;
  /** The reactions the waited-for promise was given (the driver's; reused while live). */
  reactions: Reactions | undefined;
  /** The waited-for promise resolved; the call is already off the running list. */
  answered(result: unknown): void;
  /** The waited-for promise rejected (untagged: the record knows its site). */
  failed(error: unknown): void;
  /** The driver gave up (timeout, abort); the call is already off the running list. */
  fail(error: HarnessError): void;
  /** Links of the running list (an intrusive list: no hashing, no allocation to add or remove). */
  prev?: TrackedCall | undefined;
  next?: TrackedCall | undefined;
  running?: boolean;
}

/** A call its caller stopped waiting for (timeout, abort): a snapshot, since a hook call's record moves on. */
interface AbandonedCall {
  site: PluginCallSite;
  startedAt: number;
  value: PromiseLike<unknown>;
}

const siteOf = (call: PluginCallSite): PluginCallSite =>
  call.toolCallId === undefined
    ? { plugin: call.plugin, hook: call.hook }
    : { plugin: call.plugin, hook: call.hook, toolCallId: call.toolCallId };

const ignore = () => undefined;
const settledOf = (value: PromiseLike<unknown> | undefined) => Promise.resolve(value).then(ignore, ignore);

export const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null &&
  (typeof value === "object" || typeof value === "function") &&
  typeof (value as { then?: unknown }).then === "function";

export function timeoutError(site: PluginCallSite, timeoutMs: number): HarnessError {
  return new HarnessError(
    HarnessErrorCode.hook,
    `plugin "${site.plugin}" timed out in ${site.hook} after ${timeoutMs} ms`,
    { plugin: site.plugin, hook: site.hook, toolCallId: site.toolCallId, pluginCode: "timeout" },
  );
}

export function abortedWhile(site: PluginCallSite, signal: AbortSignal): HarnessError {
  const reason = signal.reason instanceof Error ? `: ${signal.reason.message}` : "";
  return new HarnessError(
    HarnessErrorCode.aborted,
    `aborted while plugin "${site.plugin}" was running ${site.hook}${reason}`,
    { plugin: site.plugin, hook: site.hook, toolCallId: site.toolCallId, cause: signal.reason },
  );
}

/** `invoke`'s answer while the plugin's promise is waited for. */
export const PENDING: unique symbol = Symbol("pending");
/** `invoke`'s answer when the plugin threw (or the run was aborted already): the failure is `call.error`. */
export const THREW: unique symbol = Symbol("threw");

/** How a plugin function takes its arguments: `return`s its answer, or calls a node-style `callback` (`tapAsync`). */
export type CallStyle = "return" | "callback";

// biome-ignore lint/complexity/noBannedTypes: any plugin-supplied function.
export type PluginFunction = Function;

/** The pair of reactions one waited-for promise gets; giving up on it kills the pair. */
export class Reactions {
  live = true;
  constructor(
    private readonly driver: PluginDriver,
    private readonly call: TrackedCall,
  ) {}
  readonly answered = (result: unknown): void => {
    if (!this.live) return;
    this.driver.settled(this.call);
    this.call.answered(result);
  };
  readonly failed = (error: unknown): void => {
    if (!this.live) return;
    this.driver.settled(this.call);
    this.call.failed(error);
  };
}

/** One call of `run`: a record of its own, settled into one promise. */
class SingleCall implements TrackedCall {
  startedAt = Number.NaN;
  deadline = Number.POSITIVE_INFINITY;
  timeoutMs = Number.POSITIVE_INFINITY;
  value: PromiseLike<unknown> | undefined = undefined;
  error: unknown = undefined;
  reactions: Reactions | undefined = undefined;
  prev: TrackedCall | undefined = undefined;
  next: TrackedCall | undefined = undefined;
  running = false;
  readonly plugin: string;
  readonly hook: string;
  readonly toolCallId: string | undefined;
  resolve: (result: unknown) => void = ignore;
  reject: (error: unknown) => void = ignore;
  constructor(
    site: PluginCallSite,
    readonly signal: AbortSignal | undefined,
  ) {
    this.plugin = site.plugin;
    this.hook = site.hook;
    this.toolCallId = site.toolCallId;
  }
  answered(result: unknown): void {
    this.resolve(result);
  }
  failed(error: unknown): void {
    this.reject(pluginFailure(error, this));
  }
  fail(error: HarnessError): void {
    this.reject(error);
  }
}

/** Calls a `tapAsync`-style function: its callback settles the promise returned. */
function callbackValue(fn: PluginFunction, self: unknown, a: unknown, b: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => {
    fn.call(self, a, b, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result)));
  });
}

export class PluginDriver {
  /**
   * FAST PATH, kept because `bench --only hooks` and `--only turns` measure it: one idle
   * record (with its reactions) of each kind for the life of the module. V8 holds an
   * instance's final shape (map) only through live instances: after a full GC with no call
   * in flight it drops it and deoptimises every function built on it ("embedded weak
   * objects cleared"), sending the walker back through the interpreter after each GC.
   * Nothing reads them. Measured on the hooks bench's loop (a full GC between runs) with
   * `node --trace-deopt`: 66 such deopts without them, 1 with them.
   */
  static readonly resident: readonly object[] = (() => {
    const call = new SingleCall({ plugin: "", hook: "" }, undefined);
    call.reactions = new Reactions(new PluginDriver(), call);
    return [call];
  })();

  /** Calls whose caller is waiting for the result: a doubly linked list, newest last. */
  private first: TrackedCall | undefined;
  private last: TrackedCall | undefined;
  private runningCount = 0;
  /** Calls whose caller stopped waiting (timeout, abort) but that never settled: still named at shutdown. */
  private readonly abandoned = new Set<AbandonedCall>();
  private readonly watchedSignals = new WeakSet<AbortSignal>();
  /** The signal most recently given a listener (a strong reference to one signal at most). */
  private lastSignal: AbortSignal | undefined;
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;
  /** Whether `timer` keeps the process alive (it must exactly while calls are running). */
  private timerRefed = false;
  /** Whether `afterDrain` is queued (it stamps new waits and unrefs the timer when idle). */
  private drainTickQueued = false;

  /**
   * The one entry through which plugin code runs (as Rollup's `runHook`): calls
   * `fn` with `self` and up to two arguments (plus a callback for `callback`
   * style) on behalf of `call`, whose site names plugin, hook and tool call.
   *
   * - a synchronous answer is returned as is, untracked;
   * - a synchronous throw returns `THREW`, the failure tagged in `call.error`;
   * - a promise is waited for under `timeoutMs` (counted from the end of the
   *   current drain) and `call.signal`: `PENDING` is returned and later exactly
   *   one of `call.answered`, `call.failed` or `call.fail` (timeout, abort) runs.
   *   When the signal has already aborted, `THREW` with code `aborted`.
   */
  invoke(
    call: TrackedCall,
    fn: PluginFunction,
    self: unknown,
    a: unknown,
    b: unknown,
    timeoutMs: number | undefined,
    style: CallStyle = "return",
  ): unknown {
    let value: unknown;
    try {
      value = style === "return" ? fn.call(self, a, b) : callbackValue(fn, self, a, b);
    } catch (error) {
      call.error = pluginFailure(error, call);
      return THREW;
    }
    if (!isThenable(value)) return value;
    if (call.signal?.aborted) {
      this.abandon(call, Date.now(), value);
      call.error = abortedWhile(call, call.signal);
      return THREW;
    }
    // The clock is read once the current drain ends (`afterDrain`), not per call.
    call.startedAt = Number.NaN;
    call.timeoutMs = timeoutMs ?? Number.POSITIVE_INFINITY;
    call.deadline = Number.POSITIVE_INFINITY;
    call.value = value;
    this.track(call);
    this.queueDrainTick();
    if (call.reactions === undefined) call.reactions = new Reactions(this, call);
    value.then(call.reactions.answered, call.reactions.failed);
    return PENDING;
  }

  /** `invoke` for one call with nobody walking taps: resolves with the answer, rejects with the failure tagged once. */
  run<T>(...call: Parameters<PluginDriver["runNow"]>): Promise<T> {
    try {
      const answer = this.runNow(...call); // a synchronous answer is never a promise: `invoke` waits for those
      return answer instanceof Promise ? answer : Promise.resolve(answer as T);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** `run` for a caller that goes on at once (event delivery): a throw is thrown; only a pending answer is a promise. */
  runNow(
    site: PluginCallSite,
    options: PluginCallOptions,
    fn: PluginFunction,
    self?: unknown,
    a?: unknown,
    b?: unknown,
  ): unknown {
    const call = new SingleCall(site, options.signal);
    const value = this.invoke(call, fn, self, a, b, options.timeoutMs);
    if (value === THREW) throw call.error;
    if (value !== PENDING) return value;
    return new Promise((resolve, reject) => {
      call.resolve = resolve;
      call.reject = reject;
    });
  }

  /** Plugin calls that have started and not yet settled (hung and abandoned ones included). */
  inFlight(): readonly InFlightCall[] {
    const calls: InFlightCall[] = [];
    this.stampStarts();
    for (const call of this.runningCalls()) {
      calls.push({ ...siteOf(call), startedAt: call.startedAt, settled: settledOf(call.value) });
    }
    for (const { site, startedAt, value } of this.abandoned) {
      calls.push({ ...site, startedAt, settled: settledOf(value) });
    }
    return calls;
  }

  /**
   * Waits for in-flight plugin calls, at most `timeoutMs`; returns those still
   * running, so shutdown can name them.
   */
  async drain(timeoutMs: number): Promise<readonly InFlightCall[]> {
    const calls = this.inFlight();
    if (calls.length === 0) return [];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled(calls.map((c) => c.settled)), deadline]);
    clearTimeout(timer);
    return this.inFlight();
  }

  /** The caller stopped waiting: keep naming the call until its promise settles. */
  private abandon(site: PluginCallSite, startedAt: number, value: PromiseLike<unknown> | undefined): void {
    if (value === undefined) return;
    const call: AbandonedCall = { site: siteOf(site), startedAt, value };
    this.abandoned.add(call);
    const forget = () => this.abandoned.delete(call);
    value.then(forget, forget);
  }

  private runningCalls(): TrackedCall[] {
    const calls: TrackedCall[] = [];
    for (let call = this.first; call !== undefined; call = call.next) calls.push(call);
    return calls;
  }

  private link(call: TrackedCall): void {
    call.running = true;
    call.prev = this.last;
    if (this.last === undefined) this.first = call;
    else this.last.next = call;
    this.last = call;
    this.runningCount++;
  }

  /** Takes `call` off the running list; false when it was not on it. */
  private unlink(call: TrackedCall): boolean {
    if (call.running !== true) return false;
    call.running = false;
    if (call.prev === undefined) this.first = call.next;
    else call.prev.next = call.next;
    if (call.next === undefined) this.last = call.prev;
    else call.next.prev = call.prev;
    call.prev = undefined;
    call.next = undefined;
    this.runningCount--;
    return true;
  }

  private track(call: TrackedCall): void {
    this.link(call);
    const signal = call.signal;
    // The last signal seen is checked first: a run's taps all wait under the same one.
    if (signal !== undefined && signal !== this.lastSignal) {
      this.lastSignal = signal;
      if (!this.watchedSignals.has(signal)) {
        this.watchedSignals.add(signal);
        signal.addEventListener("abort", () => this.abortAll(signal), { once: true });
      }
    }
    if (call.deadline < this.armedFor) this.arm(call.deadline);
    else if (!this.timerRefed && this.timer !== undefined) {
      this.timer.ref();
      this.timerRefed = true;
    }
  }

  /** `call`'s value settled (see `waitFor`); nothing when it was given up on already. */
  settled(call: TrackedCall): void {
    if (!this.unlink(call)) return;
    // Nothing left to watch: the timer must not keep the process alive, but stays armed (cheap to reuse).
    // The unref waits for the microtask queue to drain (a tick), so a chain of fast calls
    // (one tap after another) toggles the timer once, not once per call.
    if (this.runningCount === 0) this.queueDrainTick();
  }

  private queueDrainTick(): void {
    if (this.drainTickQueued) return;
    this.drainTickQueued = true;
    process.nextTick(this.afterDrain);
  }

  /** Runs once the microtask queue is empty: stamps the waits started meanwhile, unrefs the timer if idle. */
  private readonly afterDrain = (): void => {
    this.drainTickQueued = false;
    this.stampStarts();
    if (this.runningCount > 0 || !this.timerRefed) return;
    this.timer?.unref();
    this.timerRefed = false;
  };

  /** Starts the clock of every running wait that has none yet (`waitFor`): now, an upper bound of its start. */
  private stampStarts(): void {
    let now = Number.NaN;
    for (let call = this.first; call !== undefined; call = call.next) {
      if (!Number.isNaN(call.startedAt)) continue;
      if (Number.isNaN(now)) now = Date.now();
      call.startedAt = now;
      call.deadline = now + call.timeoutMs;
      if (call.deadline < this.armedFor) this.arm(call.deadline);
    }
  }

  private arm(deadline: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = deadline;
    this.timer = setTimeout(() => this.expireDue(), Math.max(0, deadline - Date.now()));
    this.timerRefed = true;
  }

  private expireDue(): void {
    this.timer = undefined;
    this.timerRefed = false;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.stampStarts();
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.runningCalls()) {
      if (call.deadline <= now) {
        this.giveUp(call, timeoutError(call, call.timeoutMs));
      } else if (call.deadline < next) {
        next = call.deadline;
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }

  /** Stops waiting for `call`'s promise: its late answer is ignored, the call stays named until it settles. */
  private giveUp(call: TrackedCall, error: HarnessError): void {
    this.unlink(call);
    this.abandon(call, call.startedAt, call.value);
    if (call.reactions) call.reactions.live = false;
    call.reactions = undefined;
    call.fail(error);
  }

  private abortAll(signal: AbortSignal): void {
    this.stampStarts(); // the abandoned keep a start time
    for (const call of this.runningCalls()) {
      if (call.signal !== signal) continue;
      this.giveUp(call, abortedWhile(call, signal));
    }
    if (this.runningCount === 0) this.queueDrainTick();
  }
}
