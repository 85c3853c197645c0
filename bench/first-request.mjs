/**
 * A quick look at one peers-row number: `rein run` process start → first model
 * request (and the whole text-only run), against the peers benchmark's own
 * scripted model server and project setup (src/peers/), without installing or
 * running the peers. Several checkouts can be compared, interleaved:
 *
 *   node bench/first-request.mjs [--reps 11] [--calls 0] [--unsandboxed] [--node-arg ARG ...] [--peer pi ...] [ROOT ...]
 *
 * ROOT is a built checkout of this repository (default: this one); each round runs
 * every ROOT once, the order rotating, after one warm-up round. Prints medians.
 * `--node-arg` (repeatable) goes to `node` before the bin: `--cpu-prof`,
 * `--import ./probe.mjs` and the like, for profiling the same runs. `--peer ID`
 * (repeatable: pi, codex, claude) adds that peer, driven as the peers benchmark drives
 * it (installed into its cache on first use).
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PROMPT, contenders as peerContenders, reinProject } from "./src/peers/contenders.mjs";
import { cacheDir, ensurePeers } from "./src/peers/install.mjs";
import { startModelServer } from "./src/peers/model-server.mjs";
import { runOnce } from "./src/peers.mjs";
import { median } from "./src/stats.mjs";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = args[i + 1];
  args.splice(i, 2);
  return value;
};
const nodeArgs = [];
for (let arg = option("--node-arg"); arg !== undefined; arg = option("--node-arg")) nodeArgs.push(arg);
const peerIds = [];
for (let id = option("--peer"); id !== undefined; id = option("--peer")) peerIds.push(id);
const reps = Number(option("--reps", "11"));
const calls = Number(option("--calls", "0"));
const sandboxed = !args.includes("--unsandboxed");
const roots = args.filter((a) => !a.startsWith("--"));
if (roots.length === 0) roots.push(path.resolve(path.dirname(fileURLToPath(import.meta.url)), ".."));

const server = await startModelServer();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-first-request-"));
const cleanups = [];
try {
  const contenders = roots.map((root, i) => {
    const cwd = path.join(dir, `project-${i}`);
    const env = {
      ...process.env,
      NO_COLOR: "1",
      BENCH_MODEL_URL: server.origin,
      BENCH_API_KEY: "bench",
      REIN_CONFIG_DIR: path.join(dir, `config-${i}`),
      REIN_CACHE_DIR: path.join(dir, `cache-${i}`),
    };
    reinProject(cwd, sandboxed, env, root);
    const bin = path.join(root, "packages/cli/dist/bin.js");
    return {
      label: root,
      command: process.execPath,
      args: [...nodeArgs, bin, "run", PROMPT],
      cwd,
      env,
      runs: [],
    };
  });
  if (peerIds.length > 0) {
    const peers = await ensurePeers({ log: console.error, only: peerIds });
    const codexHome = fs.mkdtempSync(path.join(cacheDir(), "codex-home-"));
    cleanups.push(() => fs.rmSync(codexHome, { recursive: true, force: true }));
    for (const peer of peerContenders({ peers, origin: server.origin, dir, codexHome }))
      if (peer.kind === "peer") contenders.push({ ...peer, runs: [] });
  }
  for (let rep = -1; rep < reps; rep++) {
    for (let i = 0; i < contenders.length; i++) {
      const c = contenders[(i + Math.max(rep, 0)) % contenders.length];
      const result = await runOnce(server, c, calls);
      if (rep >= 0) c.runs.push(result);
    }
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}; ${reps} rounds, ${calls} calls, ${sandboxed ? "sandboxed" : "unsandboxed"}`,
  );
  for (const c of contenders) {
    const m = (key) => median(c.runs.map((r) => r[key])).toFixed(0);
    console.log(
      `${c.label}: start → 1st request ${m("firstRequestMs")} ms, whole run ${m("wholeMs")} ms, exit after last ${m("exitAfterMs")} ms, peak ${m("peakMiB")} MiB`,
    );
  }
} finally {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
  for (const cleanup of cleanups) cleanup();
}
