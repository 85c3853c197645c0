/**
 * The turn-benchmark contender with @rein/plugin-otel loaded and exporting:
 * Rein in memory (the `reinMemory` row) plus the plugin, its batches going over
 * real OTLP/HTTP to a sink on 127.0.0.1 that reads and discards them. Its row
 * against `reinMemory` is the plugin's cost per turn (target ≤ 1.15×).
 *
 * The row times turns, so it runs on a warm telemetry worker: one more harness
 * (never run) keeps a lease on the process's worker from the first `prepare`
 * on, as a `rein worker` serving sessions does, and each timed run's harness
 * leases that same thread. Without it every run would boot a thread, the SDK
 * and its HTTP stack (~165 ms of CPU) beside its own turns; that start-up cost
 * is measured apart (`otel-profile.mjs --cold`, docs/benchmarks.md "Tracing").
 */
import http from "node:http";
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
import otel from "@rein/plugin-otel";
import { loadPlugins } from "@rein/sdk";
import { model, pendingReplies, reinEcho, scriptToolTurns, streamFns } from "./faux.mjs";

let sink;
/** The OTLP sink: started on first use, closed when the process exits. */
async function sinkUrl() {
  sink ??= await new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    server.listen(0, "127.0.0.1", () => {
      server.unref();
      resolve(`http://127.0.0.1:${server.address().port}`);
    });
  });
  return sink;
}

const OPTIONS = async () => ({ endpoint: await sinkUrl() });

let keeper;
/** The harness whose lease keeps the process's telemetry worker up between runs. */
async function keepWorker() {
  keeper ??= (async () => {
    const harness = new AgentHarness({
      session: Session.create(new MemoryStorage()),
      model,
      tools: [reinEcho],
      streamFn: streamFns.flat,
    });
    await loadPlugins(harness, [[otel, await OPTIONS()]], { logger: () => {} });
  })();
  await keeper;
}

export const otelContender = {
  prepare: async (turns, variant) => {
    await keepWorker();
    scriptToolTurns(turns);
    const harness = new AgentHarness({
      session: Session.create(new MemoryStorage()),
      model,
      tools: [reinEcho],
      streamFn: streamFns[variant],
    });
    const host = await loadPlugins(harness, [[otel, await OPTIONS()]], { logger: () => {} });
    return { harness, host };
  },
  run: async ({ harness }) => {
    const outcome = await harness.prompt("go");
    if (outcome.status !== "completed")
      throw new Error(`rein run ended ${outcome.status}: ${outcome.reason}`);
  },
  cleanup: async ({ harness, host }) => {
    const left = pendingReplies();
    if (left !== 0) throw new Error(`reinOtel: the run left ${left} scripted replies unused`);
    await host.dispose();
    harness.session.close();
  },
};
