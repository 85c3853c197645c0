/**
 * The tracing row's parts, without the harness (docs/benchmarks.md, "Tracing"):
 * @rein/plugin-otel's own event handling fed the events of N tool turns
 * (`AgentTraces.handle`, as the harness delivers them), and
 *   - `record`: recording only (the batches are posted to a port nobody reads):
 *     the harness thread's share;
 *   - `export`: recording, plus what the telemetry worker does with each batch
 *     (decoding, span building, batching, OTLP/JSON encoding, HTTP to a sink on
 *     127.0.0.1), all on this one thread, yielding once per turn as a run does.
 * CPU per turn of this process (`process.cpuUsage()`), after a warm-up run.
 *
 *   node bench/otel-parts.mjs [record|export] [path/to/plugin-otel/dist]
 *
 * The dist may be an earlier build (before session 7 the worker replayed
 * operations on the SDK's tracer: detected by its `PresetIds` export).
 */
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

const mode = process.argv[2] ?? "export";
const dir = pathToFileURL(
  path.resolve(process.argv[3] ?? new URL("../packages/plugins/plugin-otel/dist", import.meta.url).pathname),
).href;
const { AgentTraces } = await import(`${dir}/agent-traces.js`);
const { SpanRecorder } = await import(`${dir}/span-ops.js`);
const { createPipeline } = await import(`${dir}/pipeline.js`);
const replayModule = await import(`${dir}/span-replay.js`);

const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const options = {
  endpoint: `http://127.0.0.1:${server.address().port}`,
  agentName: "rein",
  captureContent: false,
  maxContentLength: 4096,
  decisions: "span",
  metrics: true,
  exportTimeoutMs: 2000,
  shutdownTimeoutMs: 3000,
  batchDelayMs: 1000,
  maxBatchSize: 512,
  maxQueueSize: 2048,
};
const failed = (_signal, error) => console.error(`export failed: ${error}`);
let pipeline;
let send;
if (replayModule.PresetIds) {
  const ids = new replayModule.PresetIds();
  pipeline = createPipeline({ options, env: {}, version: "0", idGenerator: ids, onExportFailure: failed });
  const replay = new replayModule.SpanReplay(pipeline.tracer, pipeline.meter, ids);
  send = (ops) => {
    const json = JSON.stringify(ops);
    if (mode === "export") replay.replay(JSON.parse(json));
  };
} else {
  pipeline = createPipeline({ options, env: {}, version: "0", onExportFailure: failed });
  const replay = new replayModule.SpanReplay(
    pipeline.spans,
    pipeline.resource,
    pipeline.scope,
    pipeline.meter,
  );
  // What the harness's thread pays to post a batch (a JSON string before session 8, the
  // batch itself since); `export` adds the worker's side of the copy.
  const { port1 } = new MessageChannel();
  send = (batch) => {
    if (mode === "export")
      replay.replay(typeof batch === "string" ? JSON.parse(batch) : structuredClone(batch));
    else port1.postMessage(batch);
  };
}
const recorder = new SpanRecorder(send, 20);
const traces = new AgentTraces(
  {
    spans: recorder,
    metrics: true,
    agentName: "rein",
    captureContent: false,
    maxContentLength: 4096,
    decisions: "span",
    mask: (text) => text,
    model: () => ({ provider: "faux", id: "faux-1" }),
  },
  () => "session-1",
  () => undefined,
);
const usage = { input: 10, output: 20, cacheRead: 0, cacheWrite: 0, totalTokens: 30 };
const message = { role: "assistant", model: "faux-1", stopReason: "toolUse", usage, content: [] };
const result = { content: [{ type: "text", text: "x" }] };
const tick = () => new Promise((resolve) => setImmediate(resolve));

async function run(turns) {
  traces.handle({ type: "agent_start", runId: "r1" });
  for (let i = 0; i < turns; i++) {
    const toolCallId = `call_${i}`;
    const call = { toolCallId, toolName: "echo", args: { text: "x" } };
    traces.handle({ type: "turn_start", turnIndex: i });
    traces.handle({ type: "message_end", message });
    traces.handle({
      type: "tool_decision",
      ...call,
      decision: "allow",
      by: "harness:default",
      reason: "no opinion",
    });
    traces.handle({ type: "tool_execution_start", ...call });
    traces.handle({ type: "tool_execution_end", ...call, result, isError: false });
    await tick();
  }
  traces.handle({ type: "agent_end", status: "completed" });
  recorder.flush();
}

const turns = 8000;
await run(2000);
const baseline = process.cpuUsage();
for (let i = 0; i < turns; i++) await tick();
const idle = process.cpuUsage(baseline);
const start = process.cpuUsage();
await run(turns);
await new Promise((resolve) => setTimeout(resolve, 50));
const used = process.cpuUsage(start);
const perTurn = (used.user + used.system - idle.user - idle.system) / turns;
console.log(`${mode}: ${perTurn.toFixed(1)} µs CPU per tool turn (${process.argv[3] ?? "this tree"})`);
await pipeline.shutdown();
server.close();
