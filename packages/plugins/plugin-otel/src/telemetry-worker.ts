/**
 * The telemetry worker thread, shared: one per process and export
 * configuration, however many harnesses load the plugin (a `rein worker` runs
 * many sessions at once; each gets a harness, none gets a thread of its own).
 *
 * Invariants: a worker lives while at least one lease holds it; the last
 * release flushes and stops it within `shutdownTimeoutMs` (+ a margin for a
 * worker that is stuck), an earlier release only hands over what its harness
 * recorded; a worker that failed drops further operations and says so once.
 */
import module from "node:module";
import { Worker } from "node:worker_threads";
import type { WorkerData } from "./exporter-worker.js";
import type { OtelOptions } from "./options.js";
import type { FromWorker } from "./span-ops.js";

/**
 * The worker's entry. A worker thread needs JavaScript: when this module runs
 * from its TypeScript source (the repository's tests), the built file is used.
 */
const WORKER_URL = new URL(
  import.meta.url.endsWith(".ts") ? "../dist/exporter-worker.js" : "./exporter-worker.js",
  import.meta.url,
);

type Stopped = Extract<FromWorker, { type: "stopped" }>;

/** How the last release went: `undefined` when other leases keep the worker. */
export type ReleaseReport =
  | { outcome: Stopped["outcome"] | "stuck" | "broken"; failing: boolean }
  | undefined;

export interface WorkerLease {
  /** A JSON batch from `SpanRecorder.flush`. */
  send(batch: string): void;
  release(): Promise<ReleaseReport>;
}

type Warn = (message: string) => void;

class SharedWorker {
  private readonly worker: Worker;
  private readonly warners: Warn[] = [];
  private broken = false;
  private stopped: ((result: Stopped) => void) | undefined;

  constructor(
    private readonly key: string,
    private readonly options: OtelOptions,
    version: string,
  ) {
    const compileCache = (module as { getCompileCacheDir?(): string | undefined }).getCompileCacheDir?.();
    const workerData: WorkerData = { options, version, ...(compileCache ? { compileCache } : {}) };
    this.worker = new Worker(WORKER_URL, { workerData });
    this.worker.unref();
    this.worker.on("message", (message: FromWorker) => {
      if (message.type === "warn") this.warn(message.message);
      else this.stopped?.(message);
    });
    this.worker.on("error", (error) => {
      if (this.broken) return;
      this.broken = true;
      this.warn(`the telemetry worker failed (${error.message}); runs go on, telemetry is dropped`);
    });
  }

  lease(warn: Warn): WorkerLease {
    this.warners.push(warn);
    let released = false;
    return {
      send: (batch) => {
        if (!this.broken && !released) this.worker.postMessage(batch);
      },
      release: async () => {
        if (released) return undefined;
        released = true;
        if (this.warners.length > 1) {
          this.warners.splice(this.warners.indexOf(warn), 1);
          return undefined;
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

  private async stop(): Promise<ReleaseReport> {
    if (this.broken) {
      await this.worker.terminate();
      return { outcome: "broken", failing: true };
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
      ? { outcome: "stuck", failing: false }
      : { outcome: result.outcome, failing: result.failing };
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
