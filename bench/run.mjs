/**
 * `pnpm bench`: runs every benchmark and prints one table of ratios measured
 * side by side in this run. Options:
 *   --only turns,hooks,sessions,startup,sandbox,mcp,pgsessions,agenthook,workers,peers   run a subset
 *   --scale 0.1                   shrink every size (quick check; targets then mean little; not startup)
 *   --reps turns=5,hooks=7,sessions=3,startup=5,sandbox=31,mcp=5,agenthook=9,peers=7
 *   --out file.md                 also write the report to a file
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { agentHookRows, benchAgentHook } from "./src/agent-hook.mjs";
import { benchConcurrentWorkers, workerBenchRows } from "./src/concurrent-workers.mjs";
import { benchHooks } from "./src/hooks.mjs";
import { benchMcp, mcpRows } from "./src/mcp.mjs";
import { peerRows } from "./src/peers/rows.mjs";
import { benchPeers } from "./src/peers.mjs";
import { benchPgSessions, pgSessionRows } from "./src/pg-sessions.mjs";
import { hookRows, sandboxRows, sessionRows, startupRows, turnRows } from "./src/report.mjs";
import { benchSandbox } from "./src/sandbox.mjs";
import { benchSessions } from "./src/sessions.mjs";
import { benchStartup } from "./src/startup.mjs";
import { now } from "./src/stats.mjs";
import { describeRun, renderTable } from "./src/table.mjs";
import { benchTurns } from "./src/turns.mjs";

if (typeof globalThis.gc !== "function") {
  console.error("run with node --expose-gc (pnpm bench does): results are noisier without it");
}

const { values } = parseArgs({
  options: {
    only: {
      type: "string",
      default: "turns,hooks,sessions,startup,sandbox,mcp,pgsessions,agenthook,workers,peers",
    },
    scale: { type: "string", default: "1" },
    reps: { type: "string", default: "" },
    out: { type: "string" },
  },
});
const only = new Set(values.only.split(","));
const scale = Number(values.scale);
const reps = { turns: 5, hooks: 7, sessions: 3, startup: 5, sandbox: 31, mcp: 5, agenthook: 9, peers: 7 };
for (const pair of values.reps.split(",").filter(Boolean)) {
  const [key, value] = pair.split("=");
  reps[key] = Number(value);
}
const log = (line) => console.error(`[bench] ${line}`);

const started = now();
const rows = [];
if (only.has("turns")) rows.push(...turnRows(await benchTurns({ reps: reps.turns, scale, log })));
if (only.has("hooks")) rows.push(...hookRows(await benchHooks({ reps: reps.hooks, scale, log })));
if (only.has("sessions")) rows.push(...sessionRows(await benchSessions({ reps: reps.sessions, scale, log })));
if (only.has("pgsessions"))
  rows.push(...pgSessionRows(await benchPgSessions({ reps: reps.sessions, scale, log })));
if (only.has("startup")) rows.push(...startupRows(await benchStartup({ reps: reps.startup, log })));
if (only.has("sandbox")) rows.push(...sandboxRows(await benchSandbox({ reps: reps.sandbox, log })));
if (only.has("mcp")) rows.push(...mcpRows(await benchMcp({ reps: reps.mcp, scale, log })));
if (only.has("agenthook"))
  rows.push(...agentHookRows(await benchAgentHook({ reps: reps.agenthook, scale, log })));
if (only.has("workers")) {
  // 1 worker x 200 and 4 workers x 250 (1,000) runs in flight (--scale shrinks the runs, not the
  // latency), each shape steady (4 waves of a continuous supply: the target) and as one burst.
  const shapes = [
    [1, Math.max(1, Math.round(200 * scale))],
    [4, Math.max(1, Math.round(250 * scale))],
  ];
  rows.push(...workerBenchRows(await benchConcurrentWorkers({ shapes, latency: 2000, waves: 4, log })));
}
if (only.has("peers")) rows.push(...peerRows(await benchPeers({ reps: reps.peers, log })));
const seconds = (now() - started) / 1000;

const missed = rows.filter((r) => r.met === "**no**").length;
const met = rows.filter((r) => r.met === "yes").length;
const report = [describeRun({ reps, scale, seconds }), "", renderTable(rows), ""];
// Scripts read this line: it sits right under the table.
if (only.has("peers")) {
  const peers = rows.filter((r) => r.peers && (r.met === "yes" || r.met === "**no**"));
  report.push(`Peers targets met: ${peers.filter((r) => r.met === "yes").length} of ${peers.length}.`);
}
report.push(`Targets met: ${met} of ${met + missed}.`);
const text = report.join("\n");
console.log(text);
if (values.out) fs.writeFileSync(values.out, `${text}\n`);
