/**
 * The one choke point through which plugin code runs: hook taps, tool `execute`
 * and event listeners (as Rollup's `PluginDriver.runHook`), with the one timer
 * system and the one in-flight ledger of the harness.
 *
 * Invariants:
 * - every failure that leaves `run` / `wait` is a `HarnessError` tagged exactly
 *   once with plugin, hook and tool call, keeping the plugin's own code as
 *   `pluginCode`; a synchronous throw or a non-promise return never escapes as
 *   an unhandled rejection;
 * - every asynchronous call is tracked until it settles, so shutdown can await
 *   them and name the ones that hang (as vite's plugin container does), even
 *   after their caller stopped waiting (timeout, abort);
 * - each call's own deadline is honoured, never early: one shared watchdog
 *   timer is armed for the earliest deadline of all calls in flight. A call
 *   given with `wait` starts its clock at once; a hook tap (`waitFor`) when the
 *   synchronous run that started it ends (the microtask queue drains), one
 *   clock read for all taps started in it: reading the clock costs about as
 *   much as a pass-through tap. No timer can fire before then anyway; the
 *   deadline is late only by the work queued behind the tap in that drain;
 * - a call waiting under an `AbortSignal` stops waiting (code `aborted`) the
 *   moment the signal aborts: one listener per signal, never one per call.
 *
 * Cost matters here (every tap of every hook passes through): a synchronous
 * result returns without tracking, and the watchdog timer is never cleared when
 * the ledger empties, only unref'd, so a stream of fast calls costs no timer work.
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
 * record for its whole life, re-aimed at each tap's promise (`waitFor`): its
 * site names the tap being waited for, `startedAt` / `deadline` are that tap's.
 */
export interface TrackedCall extends PluginCallSite {
  /** When the wait started; `NaN` until stamped after the current drain (`waitFor`). */
  startedAt: number;
  deadline: number;
  /** The allowance `deadline` is computed from once `startedAt` is stamped. */
  timeoutMs: number;
  signal: AbortSignal | undefined;
  value: PromiseLike<unknown> | undefined;
  /** Stops the caller's wait with this error (timeout, abort); the call is already off the running list. */
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

/** What a waiter makes of the plugin's answer or failure (see `PluginDriver.wait`). */
export interface Settle<T, R> {
  value(result: T): R;
  failure(error: HarnessError): R;
}

export class PluginDriver {
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

  /** Runs plugin code; a promise result is waited for under `options` (see `wait`). */
  run<T>(site: PluginCallSite, fn: () => T | Promise<T>, options: PluginCallOptions = {}): Promise<T> {
    let value: T | Promise<T>;
    try {
      value = fn();
    } catch (error) {
      return Promise.reject(pluginFailure(error, site));
    }
    if (!isThenable(value)) return Promise.resolve(value);
    return this.wait(site, value as PromiseLike<T>, options);
  }

  /**
   * Waits for a promise plugin code returned: resolves with its result, rejects
   * with its failure (tagged), with a timeout once `timeoutMs` passed, or with
   * code `aborted` once `signal` aborts. The call stays in the ledger until its
   * promise settles, whatever the caller does.
   *
   * With `settle`, the returned promise resolves with `settle.value(result)` or
   * `settle.failure(error)` instead (a throw from either rejects it): the caller's
   * continuation runs in the same reaction, without a second promise and tick.
   */
  wait<T, R = T>(
    site: PluginCallSite,
    value: PromiseLike<T>,
    options: PluginCallOptions = {},
    settle?: Settle<T, R>,
  ): Promise<R> {
    const { timeoutMs, signal } = options;
    if (signal?.aborted) {
      this.abandon(site, Date.now(), value);
      const error = abortedWhile(site, signal);
      if (settle === undefined) return Promise.reject(error);
      return new Promise<R>((resolve) => resolve(settle.failure(error)));
    }
    const startedAt = Date.now();
    const deadline =
      timeoutMs === undefined || !Number.isFinite(timeoutMs)
        ? Number.POSITIVE_INFINITY
        : startedAt + timeoutMs;
    return new Promise<R>((resolve, reject) => {
      let done = false;
      const failed = (error: HarnessError) => {
        done = true;
        if (settle === undefined) reject(error);
        else {
          try {
            resolve(settle.failure(error));
          } catch (thrown) {
            reject(thrown);
          }
        }
      };
      const call = this.record(site, value, startedAt, deadline, signal, failed);
      this.track(call);
      value.then(
        (result) => {
          this.settled(call);
          if (done) return;
          done = true;
          if (settle === undefined) resolve(result as unknown as R);
          else {
            try {
              resolve(settle.value(result));
            } catch (thrown) {
              reject(thrown);
            }
          }
        },
        (error: unknown) => {
          this.settled(call);
          if (!done) failed(pluginFailure(error, site));
        },
      );
    });
  }

  /**
   * Waits for `value` on behalf of `call`, a record its owner keeps across
   * calls (a hook call walking its taps, see hook-run.ts): sets its start and
   * deadline and puts it on the running list; the owner takes it off with
   * `settled` when `value` settles, and `call.fail` runs instead on a timeout
   * or an abort. No promise or record is allocated. Returns false, without
   * tracking, when `call.signal` has already aborted (the value is kept as abandoned).
   */
  waitFor(call: TrackedCall, value: PromiseLike<unknown>, timeoutMs: number | undefined): boolean {
    if (call.signal?.aborted) {
      this.abandon(call, Date.now(), value);
      return false;
    }
    // The clock is read once the current drain ends (`afterDrain`), not per tap.
    call.startedAt = Number.NaN;
    call.timeoutMs = timeoutMs ?? Number.POSITIVE_INFINITY;
    call.deadline = Number.POSITIVE_INFINITY;
    call.value = value;
    this.track(call);
    this.queueDrainTick();
    return true;
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

  private record(
    site: PluginCallSite,
    value: PromiseLike<unknown>,
    startedAt: number,
    deadline: number,
    signal: AbortSignal | undefined,
    fail: (error: HarnessError) => void,
  ): TrackedCall {
    const { plugin, hook, toolCallId } = site;
    const timeoutMs = deadline - startedAt;
    return { plugin, hook, toolCallId, startedAt, deadline, timeoutMs, signal, value, fail };
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
        this.unlink(call);
        this.abandon(call, call.startedAt, call.value);
        call.fail(timeoutError(call, call.timeoutMs));
      } else if (call.deadline < next) {
        next = call.deadline;
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }

  private abortAll(signal: AbortSignal): void {
    this.stampStarts(); // the abandoned keep a start time
    for (const call of this.runningCalls()) {
      if (call.signal !== signal) continue;
      this.unlink(call);
      this.abandon(call, call.startedAt, call.value);
      call.fail(abortedWhile(call, signal));
    }
    if (this.runningCount === 0) this.queueDrainTick();
  }
}
