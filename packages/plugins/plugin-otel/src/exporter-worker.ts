/**
 * The telemetry worker thread: the OpenTelemetry SDK and the OTLP exporters run
 * here, off the harness's thread. It exports the spans the harness's thread
 * recorded (`span-ops.ts`) and answers a shutdown with how the last flush went.
 *
 * Invariant: nothing here can fail a run: a failing export is reported (once per
 * streak) as a warning message, and a malformed message is dropped.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { OtelOptions } from "./options.js";
import { createPipeline } from "./pipeline.js";
import type { Batch, FromWorker, ToWorker } from "./span-ops.js";
import { SpanReplay } from "./span-replay.js";

export interface WorkerData {
  options: OtelOptions;
  version: string;
}

const port = parentPort;
if (port) {
  const { options, version } = workerData as WorkerData;
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
    if (typeof message === "string") {
      try {
        replay.replay(JSON.parse(message) as Batch);
      } catch {
        // What a malformed batch still held is dropped; the next one is read as usual.
      }
      return;
    }
    if (message.type === "shutdown") {
      void pipeline.shutdown().then((result) => post({ type: "stopped", ...result }));
    }
  });
}
