/**
 * A Rein-only variant of the peers benchmark, for iterating on `rein run`: the
 * same scripted model server, scenarios, measurements and project as
 * `run.mjs --only peers`, but only Rein's contenders (and pi, with `--pi`), and
 * optionally a second checkout (`--before DIR`, built) interleaved with this one.
 *
 *   node bench/rein-peers.mjs [--rounds 7] [--before /path/to/checkout] [--pi]
 *     [--node /path/to/node]... [--sandboxed-only | --unsandboxed-only]
 *
 * Prints, per contender: medians of start → first request, whole run per
 * scenario, per-call overhead, first-call penalty, exit after the last
 * response, and the tree's peak RSS; then the load average.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { PROMPT, reinProject } from "./src/peers/contenders.mjs";
import { ensurePeers } from "./src/peers/install.mjs";
import { startModelServer } from "./src/peers/model-server.mjs";
import { runOnce, SCENARIOS, summarise } from "./src/peers.mjs";

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "7" },
    before: { type: "string" },
    pi: { type: "boolean", default: false },
    node: { type: "string", multiple: true },
    "sandboxed-only": { type: "boolean", default: false },
    "unsandboxed-only": { type: "boolean", default: false },
  },
});
const rounds = Number(values.rounds);
const trees = [{ name: "after", root: here }];
if (values.before) trees.unshift({ name: "before", root: path.resolve(values.before) });
const nodes = values.node?.length ? values.node : [process.execPath];
const modes = values["sandboxed-only"] ? [true] : values["unsandboxed-only"] ? [false] : [true, false];

const server = await startModelServer();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-peers-only-"));
try {
  const env = {
    ...process.env,
    NO_COLOR: "1",
    BENCH_MODEL_URL: server.origin,
    BENCH_API_KEY: "bench",
    REIN_CONFIG_DIR: path.join(dir, "rein-config"),
    REIN_CACHE_DIR: path.join(dir, "rein-cache"),
  };
  const all = [];
  for (const tree of trees)
    for (const sandboxed of modes) {
      const cwd = path.join(dir, `${tree.name}-${sandboxed ? "sandboxed" : "unsandboxed"}`);
      reinProject(cwd, sandboxed, env, tree.root);
      for (const node of nodes)
        all.push({
          id: `${tree.name}${sandboxed ? "" : "-unsandboxed"}${nodes.length > 1 ? `-${path.basename(path.dirname(path.dirname(path.dirname(node))))}` : ""}`,
          label: `${tree.name}, ${sandboxed ? "sandboxed" : "unsandboxed"}, ${node}`,
          command: node,
          args: [path.join(tree.root, "packages/cli/dist/bin.js"), "run", PROMPT],
          cwd,
          env,
        });
    }
  if (values.pi) {
    const [pi] = await ensurePeers({ log: console.error, only: ["pi"] });
    if (!pi.skipped) {
      const agentDir = path.join(dir, "pi-agent");
      fs.mkdirSync(agentDir, { recursive: true });
      fs.writeFileSync(
        path.join(agentDir, "models.json"),
        JSON.stringify({
          providers: {
            bench: {
              baseUrl: `${server.origin}/v1`,
              api: "openai-completions",
              apiKey: "bench",
              models: [{ id: "bench" }],
            },
          },
        }),
      );
      const cwd = path.join(dir, "work-pi");
      fs.mkdirSync(cwd);
      all.push({
        id: "pi",
        label: `pi ${pi.version}`,
        command: process.execPath,
        args: [pi.binary, "-p", "--provider", "bench", "--model", "bench", PROMPT],
        cwd,
        env: {
          ...env,
          PI_CODING_AGENT_DIR: agentDir,
          PI_OFFLINE: "1",
          PI_SKIP_VERSION_CHECK: "1",
          PI_TELEMETRY: "0",
        },
      });
    }
  }
  const samples = Object.fromEntries(all.map((c) => [c.id, { text: [], one: [], twenty: [] }]));
  console.error(
    `load before: ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
  for (let rep = -1; rep < rounds; rep++) {
    const offset = ((rep % all.length) + all.length) % all.length;
    for (const scenario of SCENARIOS)
      for (let i = 0; i < all.length; i++) {
        const contender = all[(i + offset) % all.length];
        const result = await runOnce(server, contender, scenario.calls);
        if (rep >= 0) samples[contender.id][scenario.id].push(result);
      }
    if (rep >= 0) console.error(`round ${rep + 1} of ${rounds}`);
  }
  const results = summarise(samples);
  const f = (n) => (Number.isFinite(n) ? n.toFixed(1) : String(n));
  console.log(
    "| contender | start→1st req | text / 1 / 20 calls | per call | 1st-call penalty | exit after last | peak RSS MiB (text/1/20) |",
  );
  console.log("|---|---|---|---|---|---|---|");
  for (const c of all) {
    const r = results[c.id];
    const s = r.scenarios;
    console.log(
      `| ${c.label} | ${f(r.firstRequestMs)} | ${f(s.text.wholeMs)} / ${f(s.one.wholeMs)} / ${f(s.twenty.wholeMs)} | ${f(r.perCallMs)} | ${f(r.firstCallMs)} | ${f(r.exitAfterMs)} | ${f(r.peakMiB)} (${f(s.text.peakMiB)}/${f(s.one.peakMiB)}/${f(s.twenty.peakMiB)}) |`,
    );
  }
  console.log(
    `load average at the end: ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}; ${rounds} rounds`,
  );
} finally {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
