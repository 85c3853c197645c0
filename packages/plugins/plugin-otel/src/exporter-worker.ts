/**
 * The telemetry worker thread: the OpenTelemetry SDK and the OTLP exporters run
 * here, off the harness's thread. It exports the spans the harness's thread
 * recorded (`span-ops.ts`) and answers a shutdown with how the last flush went.
 *
 * Invariant: nothing here can fail a run: a failing export is reported (once per
 * streak) as a warning message, and a malformed message is dropped. Messages
 * that arrive while the SDK is still loading wait in the port's queue.
 */
import module from "node:module";
import { dirname } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import type { OtelOptions } from "./options.js";
import type { Batch, FromWorker, ToWorker } from "./span-ops.js";

export interface WorkerData {
  options: OtelOptions;
  version: string;
  /** The host thread's compile cache folder (`module.getCompileCacheDir()`), if it enabled one. */
  compileCache?: string;
}

type CompileCache = { enableCompileCache?(dir: string): unknown; getCompileCacheDir?(): string | undefined };

/**
 * A worker thread does not inherit the compile cache its host enabled (Rein's CLI
 * enables none, but a host may, e.g. with `NODE_COMPILE_CACHE`): the SDK's few hundred modules are compiled again
 * in every process unless the worker enables the same folder before loading them.
 */
function useHostCompileCache(dir: string | undefined): void {
  const cache = module as CompileCache;
  if (dir === undefined || cache.getCompileCacheDir?.() !== undefined) return;
  try {
    // `getCompileCacheDir()` names a versioned folder inside the one that was enabled.
    cache.enableCompileCache?.(dirname(dir));
  } catch {
    // A cache that cannot be used only costs compile time.
  }
}

const port = parentPort;
if (port) {
  const { options, version, compileCache } = workerData as WorkerData;
  useHostCompileCache(compileCache);
  const [{ createPipeline }, { SpanReplay }] = await Promise.all([
    import("./pipeline.js"),
    import("./span-replay.js"),
  ]);
  const post = (message: FromWorker) => port.postMessage(message);
  const pipeline = createPipeline({
    options,
    env: process.env,
    version,
    onExportFailure: (signal, error) =>
      post({
        type: "warn",
        message: `cannot export ${signal} to the OTLP endpoint (${error}); runs go on, telemetry is dropped until it answers`,
      }),
  });
  const replay = new SpanReplay(pipeline.spans, pipeline.resource, pipeline.scope, pipeline.meter);
  port.on("message", (message: ToWorker) => {
    if (Array.isArray(message)) {
      try {
        replay.replay(message as Batch);
      } catch {
        // What a malformed batch still held is dropped; the next one is read as usual.
      }
      return;
    }
    if (message.type === "shutdown") {
      void pipeline.shutdown().then((result) => post({ type: "stopped", ...result }));
    } else if (message.type === "flush") {
      const { id } = message;
      void pipeline.flush().then((result) => post({ type: "flushed", id, ...result }));
    }
  });
}
