/**
 * The one choke point through which plugin code runs: hook taps, tool `execute`
 * and event listeners (as Rollup's `PluginDriver.runHook`).
 *
 * Invariants: every failure that leaves `run` is a `HarnessError` tagged exactly
 * once with plugin, hook and tool call, keeping the plugin's own code as
 * `pluginCode`; a synchronous throw or a non-promise return never escapes as an
 * unhandled rejection; every call in flight is tracked, so shutdown can await
 * them and name the ones that hang (as vite's plugin container does).
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

export class PluginDriver {
  private readonly inFlightCalls = new Set<InFlightCall>();

  async run<T>(site: PluginCallSite, fn: () => T | Promise<T>, options: PluginCallOptions = {}): Promise<T> {
    let pending: Promise<T>;
    try {
      pending = Promise.resolve(fn());
    } catch (error) {
      throw pluginFailure(error, site);
    }
    const call: InFlightCall = { ...site, startedAt: Date.now(), settled: pending };
    this.inFlightCalls.add(call);
    const untrack = () => this.inFlightCalls.delete(call);
    pending.then(untrack, untrack);
    try {
      const timeoutMs = options.timeoutMs;
      if (timeoutMs === undefined || !Number.isFinite(timeoutMs)) return await pending;
      return await withTimeout(pending, timeoutMs, site);
    } catch (error) {
      throw pluginFailure(error, site);
    }
  }

  /** Plugin calls that have started and not yet settled (hung taps show up here). */
  inFlight(): readonly InFlightCall[] {
    return [...this.inFlightCalls];
  }

  /**
   * Waits for in-flight plugin calls, at most `timeoutMs`; returns those still
   * running, so shutdown can name them.
   */
  async drain(timeoutMs: number): Promise<readonly InFlightCall[]> {
    if (this.inFlightCalls.size === 0) return [];
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.allSettled([...this.inFlightCalls].map((c) => c.settled)), deadline]);
    clearTimeout(timer);
    return this.inFlight();
  }
}

function withTimeout<T>(pending: Promise<T>, timeoutMs: number, site: PluginCallSite): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new HarnessError(
          HarnessErrorCode.hook,
          `plugin "${site.plugin}" timed out in ${site.hook} after ${timeoutMs} ms`,
          { plugin: site.plugin, hook: site.hook, toolCallId: site.toolCallId, pluginCode: "timeout" },
        ),
      );
    }, timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
