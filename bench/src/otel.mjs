/**
 * The turn-benchmark contender with @rein/plugin-otel loaded and exporting:
 * Rein in memory (the `reinMemory` row) plus the plugin, its batches going over
 * real OTLP/HTTP to a sink on 127.0.0.1 that reads and discards them. Its row
 * against `reinMemory` is the plugin's cost per turn (target ≤ 1.15×).
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

export const otelContender = {
  prepare: async (turns, variant) => {
    scriptToolTurns(turns);
    const harness = new AgentHarness({
      session: Session.create(new MemoryStorage()),
      model,
      tools: [reinEcho],
      streamFn: streamFns[variant],
    });
    const host = await loadPlugins(harness, [[otel, { endpoint: await sinkUrl() }]], { logger: () => {} });
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
