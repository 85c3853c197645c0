/**
 * The one choke point through which plugin code runs: hook taps, tool `execute`
 * and event listeners (as Rollup's `PluginDriver.runHook`).
 *
 * Invariants: every failure that leaves `run` is a `HarnessError` tagged exactly
 * once with plugin, hook and tool call, keeping the plugin's own code as
 * `pluginCode`; a synchronous throw or a non-promise return never escapes as an
 * unhandled rejection; every asynchronous call in flight is tracked, so shutdown
 * can await them and name the ones that hang (as vite's plugin container does).
 *
 * Cost matters here (every tap of every hook passes through): a synchronous
 * result returns without tracking, and timeouts share one timer armed for the
 * earliest deadline instead of one timer per call.
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
}

export interface InFlightCall extends PluginCallSite {
  startedAt: number;
  settled: Promise<unknown>;
}

interface TrackedCall {
  site: PluginCallSite;
  startedAt: number;
  deadline: number;
  value: PromiseLike<unknown>;
  expire(): void;
}

const ignore = () => undefined;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  value !== null &&
  (typeof value === "object" || typeof value === "function") &&
  typeof (value as { then?: unknown }).then === "function";

export class PluginDriver {
  /** Calls waiting for their result, each with a deadline (Infinity: none). */
  private readonly running = new Set<TrackedCall>();
  /** Calls that timed out but never settled: still named at shutdown. */
  private readonly hung = new Set<TrackedCall>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Number.POSITIVE_INFINITY;

  run<T>(site: PluginCallSite, fn: () => T | Promise<T>, options: PluginCallOptions = {}): Promise<T> {
    let value: T | Promise<T>;
    try {
      value = fn();
    } catch (error) {
      return Promise.reject(pluginFailure(error, site));
    }
    if (!isThenable(value)) return Promise.resolve(value);
    const pending = value as PromiseLike<T>;
    const timeoutMs = options.timeoutMs;
    const startedAt = Date.now();
    const deadline =
      timeoutMs === undefined || !Number.isFinite(timeoutMs)
        ? Number.POSITIVE_INFINITY
        : startedAt + timeoutMs;
    return new Promise<T>((resolve, reject) => {
      let done = false;
      const call: TrackedCall = {
        site,
        startedAt,
        deadline,
        value: pending,
        expire: () => {
          done = true;
          this.hung.add(call);
          reject(
            new HarnessError(
              HarnessErrorCode.hook,
              `plugin "${site.plugin}" timed out in ${site.hook} after ${timeoutMs} ms`,
              { plugin: site.plugin, hook: site.hook, toolCallId: site.toolCallId, pluginCode: "timeout" },
            ),
          );
        },
      };
      this.track(call);
      pending.then(
        (result) => {
          this.untrack(call);
          if (!done) resolve(result);
        },
        (error: unknown) => {
          this.untrack(call);
          if (!done) reject(pluginFailure(error, site));
        },
      );
    });
  }

  /** Tracks a call that has no deadline until it settles, so shutdown can name it if it never does. */
  watch<T>(site: PluginCallSite, value: PromiseLike<T>): PromiseLike<T> {
    const call: TrackedCall = {
      site: { ...site },
      startedAt: Date.now(),
      deadline: Number.POSITIVE_INFINITY,
      value,
      expire: ignore,
    };
    this.running.add(call);
    return value.then(
      (result) => {
        this.untrack(call);
        return result;
      },
      (error: unknown) => {
        this.untrack(call);
        throw error;
      },
    );
  }

  /** Records a call that timed out and is still running, until it settles. */
  markHung(site: PluginCallSite, value: PromiseLike<unknown>): void {
    const call: TrackedCall = {
      site: { ...site },
      startedAt: Date.now(),
      deadline: 0,
      value,
      expire: ignore,
    };
    this.hung.add(call);
    value.then(
      () => this.hung.delete(call),
      () => this.hung.delete(call),
    );
  }

  /** Plugin calls that have started and not yet settled (hung taps show up here). */
  inFlight(): readonly InFlightCall[] {
    return [...this.running, ...this.hung].map(({ site, startedAt, value }) => ({
      ...site,
      startedAt,
      settled: Promise.resolve(value).then(ignore, ignore),
    }));
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

  private track(call: TrackedCall): void {
    this.running.add(call);
    if (call.deadline < this.armedFor) this.arm(call.deadline);
  }

  private untrack(call: TrackedCall): void {
    this.hung.delete(call);
    if (!this.running.delete(call)) return;
    // Nothing left to watch: drop the timer so it never keeps the process alive.
    if (this.running.size === 0 && this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.armedFor = Number.POSITIVE_INFINITY;
    }
  }

  private arm(deadline: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.armedFor = deadline;
    this.timer = setTimeout(() => this.expireDue(), Math.max(0, deadline - Date.now()));
  }

  private expireDue(): void {
    this.timer = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.running) {
      if (call.deadline <= now) {
        this.running.delete(call);
        call.expire();
      } else if (call.deadline < next) {
        next = call.deadline;
      }
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}
