/**
 * The telemetry worker thread, shared: one per process and export
 * configuration, however many harnesses load the plugin (a `rein worker` runs
 * many sessions at once; each gets a harness, none gets a thread of its own).
 *
 * Invariants: a worker lives while at least one lease holds it; the last
 * release flushes and stops it within `shutdownTimeoutMs` (+ a margin for a
 * worker that is stuck), an earlier release flushes what is buffered (its
 * harness's spans among it) within the same bound and leaves the worker
 * running; a worker that failed drops further operations and says so once.
 */
import module from "node:module";
import { Worker } from "node:worker_threads";
import type { WorkerData } from "./exporter-worker.js";
import type { OtelOptions } from "./options.js";
import type { Batch, FromWorker } from "./span-ops.js";

/**
 * The worker's entry. A worker thread needs JavaScript: when this module runs
 * from its TypeScript source (the repository's tests), the built file is used.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "../dist/exporter-worker.js" : "./exporter-worker.js",
  import.meta.url,
);

type Stopped = Extract<FromWorker, { type: "stopped" }>;
type Flushed = Extract<FromWorker, { type: "flushed" }>;

/**
 * How a release's flush went (`undefined`: the lease was already released);
 * `stopped`: it was the last lease, so what was not sent is dropped.
 */
export type ReleaseReport =
  | { outcome: Stopped["outcome"] | "stuck" | "broken"; failing: boolean; stopped: boolean }
  | undefined;

export interface WorkerLease {
  /** A batch from `SpanRecorder.flush` (cloned into the worker; never blocks, never throws). */
  send(batch: Batch): void;
  release(): Promise<ReleaseReport>;
}

type Warn = (message: string) => void;

class SharedWorker {
  private readonly worker: Worker;
  private readonly warners: Warn[] = [];
  private broken = false;
  private stopped: ((result: Stopped) => void) | undefined;
  private readonly flushes = new Map<number, (result: Flushed | undefined) => void>();
  private nextFlush = 0;
  private sendFailed = false;

  constructor(
    private readonly key: string,
    private readonly options: OtelOptions,
    version: string,
  ) {
    const compileCache = (module as { getCompileCacheDir?(): string | undefined }).getCompileCacheDir?.();
    const workerData: WorkerData = { options, version, ...(compileCache ? { compileCache } : {}) };
    this.worker = new Worker(WORKER_URL, { workerData });
    this.worker.on("message", (message: FromWorker) => {
      if (message.type === "warn") this.warn(message.message);
      else if (message.type === "flushed") this.flushes.get(message.id)?.(message);
      else this.stopped?.(message);
    });
    this.worker.on("error", (error) => {
      if (this.broken) return;
      this.broken = true;
      // A flush waiting on a dead worker ends now, not at its timeout.
      for (const resolve of this.flushes.values()) resolve(undefined);
      this.warn(`the telemetry worker failed (${error.message}); runs go on, telemetry is dropped`);
    });
    // After the listeners: adding a `message` listener refs the worker's port again.
    this.worker.unref();
  }

  lease(warn: Warn): WorkerLease {
    this.warners.push(warn);
    let released = false;
    return {
      send: (batch) => {
        if (this.broken || released) return;
        try {
          this.worker.postMessage(batch);
        } catch (error) {
          // A value that cannot be cloned drops its batch, never the turn that recorded it.
          if (this.sendFailed) return;
          this.sendFailed = true;
          this.warn(`a telemetry batch could not be sent and is dropped (${(error as Error).message})`);
        }
      },
      release: async () => {
        if (released) return undefined;
        released = true;
        if (this.warners.length > 1) {
          // Others keep the worker: what this harness recorded leaves now, the thread stays.
          const report = await this.flush();
          this.warners.splice(this.warners.indexOf(warn), 1);
          return report;
        }
        // The last lease: its logger hears what the final flush reports.
        shared.delete(this.key);
        const report = await this.stop();
        this.warners.length = 0;
        return report;
      },
    };
  }

  /** Warnings go to the newest lease's logger: one line, not one per harness. */
  private warn(message: string): void {
    this.warners.at(-1)?.(message);
  }

  /** Exports what the worker holds, within `shutdownTimeoutMs` (+ the same margin as `stop`). */
  private async flush(): Promise<ReleaseReport> {
    if (this.broken) return { outcome: "broken", failing: true, stopped: false };
    const id = this.nextFlush++;
    let timer: NodeJS.Timeout | undefined;
    const result = await new Promise<Flushed | undefined>((resolve) => {
      this.flushes.set(id, resolve);
      // Not unref'd: a dispose being awaited holds the process until the flush ends or times out.
      timer = setTimeout(() => resolve(undefined), this.options.shutdownTimeoutMs + 500);
      this.worker.postMessage({ type: "flush", id });
    });
    clearTimeout(timer);
    this.flushes.delete(id);
    return result === undefined
      ? { outcome: this.broken ? "broken" : "stuck", failing: this.broken, stopped: false }
      : { outcome: result.outcome, failing: result.failing, stopped: false };
  }

  private async stop(): Promise<ReleaseReport> {
    if (this.broken) {
      await this.worker.terminate();
      return { outcome: "broken", failing: true, stopped: true };
    }
    let timer: NodeJS.Timeout | undefined;
    const result = await new Promise<Stopped | undefined>((resolve) => {
      this.stopped = resolve;
      this.worker.once("exit", () => resolve(undefined));
      timer = setTimeout(() => resolve(undefined), this.options.shutdownTimeoutMs + 500);
      this.worker.postMessage({ type: "shutdown" });
    });
    clearTimeout(timer);
    await this.worker.terminate();
    return result === undefined
      ? { outcome: "stuck", failing: false, stopped: true }
      : { outcome: result.outcome, failing: result.failing, stopped: true };
  }
}

const shared = new Map<string, SharedWorker>();

/** A lease on the worker for these options (started on first use). */
export function leaseTelemetryWorker(options: OtelOptions, version: string, warn: Warn): WorkerLease {
  const key = JSON.stringify(options);
  let worker = shared.get(key);
  if (!worker) {
    worker = new SharedWorker(key, options, version);
    shared.set(key, worker);
  }
  return worker.lease(warn);
}
