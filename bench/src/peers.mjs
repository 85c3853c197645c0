/**
 * Benchmark 7: `rein run` against the agent CLIs people would otherwise run
 * (Claude Code, Codex, pi), each a fresh process on the same scripted model server
 * (src/peers/model-server.mjs), on three scenarios: a text-only answer, one bash
 * call, 20 bash calls. Every round runs every scenario for every contender, the
 * contenders' order rotating from round to round, after one warm-up round (it
 * fills Rein's transpile cache and the OS file cache).
 *
 * Per run: process start → first model request, the whole run (spawn to exit),
 * last response → exit, and the process tree's peak RSS. Per contender, medians
 * over the rounds; per-call overhead = (20 calls − 1 call) / 19, first-call
 * penalty = 1 call − text only.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { contenders } from "./peers/contenders.mjs";
import { cacheDir, ensurePeers } from "./peers/install.mjs";
import { startModelServer } from "./peers/model-server.mjs";
import { sampleTree } from "./peers/tree-rss.mjs";
import { collect, median, now } from "./stats.mjs";

export const SCENARIOS = [
  { id: "text", calls: 0 },
  { id: "one", calls: 1 },
  { id: "twenty", calls: 20 },
];

const RUN_TIMEOUT_MS = 120_000;

/** One run of one contender on one scenario; rejects with the reason it did not finish as scripted. */
export function runOnce(server, contender, calls) {
  const record = server.expect({ calls });
  return new Promise((resolve, reject) => {
    collect();
    const started = now();
    const child = spawn(contender.command, contender.args, {
      cwd: contender.cwd,
      env: contender.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tree = sampleTree(child.pid);
    let output = "";
    const keep = (chunk) => {
      output = (output + chunk).slice(-4000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.once("error", (error) => {
      clearTimeout(timer);
      tree.stop();
      reject(error);
    });
    child.once("exit", (code, signal) => {
      const exited = now();
      clearTimeout(timer);
      const peakMiB = tree.stop();
      const problem =
        code !== 0
          ? `exited ${code ?? signal}`
          : record.requests.length !== calls + 1
            ? `made ${record.requests.length} model requests, expected ${calls + 1}`
            : record.responses.length !== calls + 1
              ? "exited before the last response was sent"
              : undefined;
      if (problem) {
        const unknown =
          record.unknown.length > 0 ? ` (unanswered: ${record.unknown.slice(0, 3).join(", ")})` : "";
        reject(
          new Error(`${contender.label}, ${calls} calls: ${problem}${unknown}: ${output.trim().slice(-600)}`),
        );
        return;
      }
      resolve({
        firstRequestMs: record.requests[0] - started,
        wholeMs: exited - started,
        exitAfterMs: exited - record.responses.at(-1),
        peakMiB,
      });
    });
  });
}

/** Medians per contender and scenario, plus the derived per-call overhead and first-call penalty. */
export function summarise(samples) {
  const out = {};
  for (const [id, byScenario] of Object.entries(samples)) {
    const m = {};
    for (const [scenario, runs] of Object.entries(byScenario)) {
      if (runs.length === 0) continue;
      m[scenario] = Object.fromEntries(
        ["firstRequestMs", "wholeMs", "exitAfterMs", "peakMiB"].map((key) => [
          key,
          median(runs.map((run) => run[key])),
        ]),
      );
    }
    if (!m.text || !m.one || !m.twenty) {
      out[id] = { incomplete: true };
      continue;
    }
    out[id] = {
      scenarios: m,
      firstRequestMs: median(SCENARIOS.flatMap((s) => byScenario[s.id].map((run) => run.firstRequestMs))),
      perCallMs: (m.twenty.wholeMs - m.one.wholeMs) / 19,
      firstCallMs: m.one.wholeMs - m.text.wholeMs,
      exitAfterMs: median(SCENARIOS.flatMap((s) => byScenario[s.id].map((run) => run.exitAfterMs))),
      peakMiB: Math.max(...SCENARIOS.map((s) => m[s.id].peakMiB)),
    };
  }
  return out;
}

export async function benchPeers({ reps, log }) {
  const peers = await ensurePeers({ log });
  const server = await startModelServer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-peers-"));
  const codexHome = fs.mkdtempSync(path.join(cacheDir(), "codex-home-"));
  try {
    const all = contenders({ peers, origin: server.origin, dir, codexHome });
    const samples = Object.fromEntries(all.map((c) => [c.id, { text: [], one: [], twenty: [] }]));
    const failed = {};
    log(`peers: ${all.map((c) => c.label).join(", ")}; ${reps} rounds of 3 scenarios + 1 warm-up`);
    for (let rep = -1; rep < reps; rep++) {
      const offset = (((rep % all.length) + all.length) % all.length) | 0;
      for (const scenario of SCENARIOS) {
        for (let i = 0; i < all.length; i++) {
          const contender = all[(i + offset) % all.length];
          if (failed[contender.id]) continue;
          try {
            const result = await runOnce(server, contender, scenario.calls);
            if (rep >= 0) samples[contender.id][scenario.id].push(result);
          } catch (error) {
            failed[contender.id] = error instanceof Error ? error.message : String(error);
            log(`peers: ${contender.label} failed and is left out: ${failed[contender.id]}`);
          }
        }
      }
      if (rep >= 0) log(`peers: round ${rep + 1} of ${reps} done`);
    }
    const results = summarise(samples);
    return {
      peers,
      contenders: all.map(({ id, label, kind, runtime, sandboxed, main }) => ({
        id,
        label,
        kind,
        runtime,
        sandboxed,
        main,
        failed: failed[id],
        result: failed[id] ? undefined : results[id],
      })),
    };
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(codexHome, { recursive: true, force: true });
  }
}
