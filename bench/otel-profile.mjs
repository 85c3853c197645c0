/**
 * The tracing row's profile (docs/benchmarks.md, "Tracing"): Rein in memory
 * with and without @rein/plugin-otel exporting to a sink on 127.0.0.1,
 * interleaved, medians of wall time per turn and of the harness thread's own
 * CPU per turn (`process.threadCpuUsage`, less sensitive to other load than
 * wall time), and the whole process's CPU per turn (the telemetry worker and
 * V8's background threads included).
 *
 *   node --expose-gc bench/otel-profile.mjs [--turns 500] [--reps 7] [--warm] [--settle ms] [--also name=path/to/index.js ...]
 *
 * `--also` adds another build of the plugin as a contender (a copy of an
 * earlier `dist`), so a before/after runs in the same rounds.
 */
import http from "node:http";
import { parseArgs } from "node:util";
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
import otel from "@rein/plugin-otel";
import { definePlugin, loadPlugins } from "@rein/sdk";
import { model, pendingReplies, reinEcho, scriptToolTurns, streamFns } from "./src/faux.mjs";
import { collect, median } from "./src/stats.mjs";

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "500" },
    reps: { type: "string", default: "7" },
    also: { type: "string", multiple: true, default: [] },
    only: { type: "string" },
    settle: { type: "string", default: "0" },
    warm: { type: "boolean", default: false },
  },
});
const turns = Number(values.turns);
const reps = Number(values.reps);

const sink = await new Promise((resolve) => {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
  });
  server.listen(0, "127.0.0.1", () => {
    server.unref();
    resolve(`http://127.0.0.1:${server.address().port}`);
  });
});

/** The traced event types with listeners that do nothing: the harness's cost of delivering them. */
const TRACED = ["agent_start", "turn_start", "message_end", "retry", "tool_decision", "tool_parked"];
TRACED.push(
  "tool_execution_start",
  "tool_execution_end",
  "plugin_error",
  "abort",
  "agent_end",
  "child_event",
);
const listen = definePlugin({
  name: "listen",
  setup(rein) {
    for (const type of TRACED) rein.on(type, () => {});
  },
});
const plugins = { listen, otel };
for (const spec of values.also) {
  const [name, file] = spec.split("=");
  plugins[name] = (await import(new URL(file, `file://${process.cwd()}/`).href)).default;
}

const contenders = [{ name: "none", plugin: undefined }];
for (const [name, plugin] of Object.entries(plugins)) contenders.push({ name, plugin });
const active = values.only ? contenders.filter((c) => values.only.split(",").includes(c.name)) : contenders;

/**
 * `--warm`: one more harness per tracing build, never run, keeps a lease on that
 * build's telemetry worker, so each timed run finds it booted (as the turn row
 * does, `src/otel.mjs`); `--settle` then also waits after each dispose, so an
 * earlier build whose dispose did not flush a shared worker exports before the
 * next run, not during it.
 */
const keepers = new Map();
async function keepWorker(plugin) {
  if (!values.warm || plugin === undefined || plugin === listen || keepers.has(plugin)) return;
  const harness = new AgentHarness({
    session: Session.create(new MemoryStorage()),
    model,
    tools: [reinEcho],
    streamFn: streamFns.flat,
  });
  keepers.set(plugin, await loadPlugins(harness, [[plugin, { endpoint: sink }]], { logger: () => {} }));
}

async function once(plugin) {
  await keepWorker(plugin);
  scriptToolTurns(turns);
  const harness = new AgentHarness({
    session: Session.create(new MemoryStorage()),
    model,
    tools: [reinEcho],
    streamFn: streamFns.flat,
  });
  const host = plugin
    ? await loadPlugins(harness, [plugin === listen ? plugin : [plugin, { endpoint: sink }]], {
        logger: () => {},
      })
    : undefined;
  if (Number(values.settle) > 0) await new Promise((r) => setTimeout(r, Number(values.settle)));
  collect();
  const cpu0 = process.threadCpuUsage();
  const proc0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const outcome = await harness.prompt("go");
  const wall = Number(process.hrtime.bigint() - t0) / 1000;
  const cpu1 = process.threadCpuUsage(cpu0);
  const proc1 = process.cpuUsage(proc0);
  if (outcome.status !== "completed") throw new Error(`run ended ${outcome.status}`);
  if (pendingReplies() !== 0) throw new Error("replies left");
  const d0 = process.hrtime.bigint();
  await host?.dispose();
  const dispose = Number(process.hrtime.bigint() - d0) / 1000;
  harness.session.close();
  if (values.warm && Number(values.settle) > 0)
    await new Promise((r) => setTimeout(r, Number(values.settle)));
  const n = turns + 1;
  return {
    wall: wall / n,
    cpu: (cpu1.user + cpu1.system) / n,
    proc: (proc1.user + proc1.system) / n,
    dispose: dispose / 1000,
  };
}

const samples = Object.fromEntries(active.map((c) => [c.name, []]));
for (let rep = -1; rep < reps; rep++) {
  const offset = ((rep % active.length) + active.length) % active.length;
  for (let i = 0; i < active.length; i++) {
    const c = active[(i + offset) % active.length];
    const r = await once(c.plugin);
    if (rep >= 0) samples[c.name].push(r);
  }
}
const fmt = (v) => v.toFixed(1).padStart(7);
const base = median(samples.none?.map((s) => s.wall) ?? [1]);
const baseCpu = median(samples.none?.map((s) => s.cpu) ?? [1]);
console.log(
  `turns ${turns}, reps ${reps}, load ${(await import("node:os"))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
console.log("row        wall µs  ratio  thread-cpu µs  ratio  process-cpu µs  dispose ms");
for (const c of active) {
  const s = samples[c.name];
  const wall = median(s.map((x) => x.wall));
  const cpu = median(s.map((x) => x.cpu));
  console.log(
    `${c.name.padEnd(10)} ${fmt(wall)} ${(wall / base).toFixed(2).padStart(6)} ${fmt(cpu)}        ${(cpu / baseCpu).toFixed(2).padStart(5)} ${fmt(median(s.map((x) => x.proc)))}         ${fmt(median(s.map((x) => x.dispose)))}`,
  );
}
