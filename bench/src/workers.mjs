/**
 * Worker throughput: prompt jobs per second through `rein worker` with 1 and 3
 * worker processes, on the scripted model (each job: one tool call, then the
 * answer) and a real PostgreSQL (a throwaway cluster, or REIN_PG_URL). Each
 * measurement is a fresh database and fresh worker processes; the clock runs from
 * the first submit until pg-boss reports every job completed. Runs of 1 and 3
 * workers are interleaved; the table shows medians.
 *
 * Standalone: `node bench/src/workers.mjs [--jobs 60] [--reps 3]` (after `tsc -b`).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  closeQueue,
  openQueue,
  QUEUE_SCHEMA,
  submitPrompt,
} from "../../packages/cli/dist/worker/prompt-queue.js";
import pg from "../../packages/cli/node_modules/pg/lib/index.js";
import { SessionStore } from "../../packages/harness/dist/index.js";
import { createDatabase, dropDatabase, startPostgres } from "../../packages/test-postgres/dist/index.js";
import { median, now } from "./stats.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const REIN = path.join(root, "packages/cli/dist/bin.js");

const CONFIG = `export default {
  model: { script: [{ toolCalls: [{ name: "echo", args: { text: "x" } }] }, "done"] },
  plugins: ["./tools.ts"],
};
`;
const TOOLS = `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "bench-tools",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "echo", description: "echo", parameters: Type.Object({ text: Type.String() }), risk: "read",
      execute: async (args) => ({ content: [{ type: "text", text: args.text }] }),
    }));
  },
});
`;

async function once(serverUrl, workers, jobs) {
  const url = await createDatabase(serverUrl, "rein_bench");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-workers-"));
  fs.writeFileSync(path.join(dir, "rein.config.ts"), CONFIG);
  fs.writeFileSync(path.join(dir, "tools.ts"), TOOLS);
  const store = new SessionStore(path.join(dir, ".rein/sessions"));
  const ids = [];
  for (let i = 0; i < jobs; i++) {
    const session = store.create({ cwd: dir });
    ids.push(session.id);
    session.close();
  }
  const children = [];
  try {
    // The queue exists before workers poll it.
    await closeQueue(await openQueue(url));
    const ready = [];
    for (let i = 0; i < workers; i++) {
      const child = spawn(process.execPath, [REIN, "worker", "--db", url, "--poll", "0.5"], {
        cwd: dir,
        env: { ...process.env, NO_COLOR: "1" },
        stdio: ["ignore", "ignore", "pipe"],
      });
      children.push(child);
      ready.push(
        new Promise((resolve, reject) => {
          let err = "";
          child.stderr.on("data", (chunk) => {
            err += chunk;
            if (err.includes("ready")) resolve();
          });
          child.on("exit", (code) => reject(new Error(`worker exited ${code}: ${err}`)));
        }),
      );
    }
    await Promise.all(ready);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const boss = await openQueue(url, { role: "client" });
    const started = now();
    for (const sessionId of ids) await submitPrompt(boss, { sessionId, prompt: "go" });
    let done = 0;
    while (done < jobs) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const result = await client.query(
        `SELECT count(*)::int AS n FROM ${QUEUE_SCHEMA}.job WHERE state = 'completed'`,
      );
      done = result.rows[0].n;
    }
    const seconds = (now() - started) / 1000;
    await closeQueue(boss);
    await client.end();
    return jobs / seconds;
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))));
    fs.rmSync(dir, { recursive: true, force: true });
    await dropDatabase(url).catch(() => undefined);
  }
}

/** Jobs per second with 1 and 3 workers, interleaved; medians of `reps`. */
export async function benchWorkers({ jobs = 60, reps = 3, log = () => {} } = {}) {
  const postgres = await startPostgres();
  const results = { 1: [], 3: [] };
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const workers of rep % 2 === 0 ? [1, 3] : [3, 1]) {
        const rate = await once(postgres.url, workers, jobs);
        log(`workers=${workers} rep=${rep}: ${rate.toFixed(1)} jobs/s`);
        results[workers].push(rate);
      }
    }
  } finally {
    await postgres.stop();
  }
  return { jobs, reps, one: median(results[1]), three: median(results[3]) };
}

export function workerRows(result) {
  return [
    "| worker throughput (scripted model, 1 tool call + answer per job) | jobs/s |",
    "| --- | --- |",
    `| 1 worker, ${result.jobs} jobs | ${result.one.toFixed(1)} |`,
    `| 3 workers, ${result.jobs} jobs | ${result.three.toFixed(1)} (${(result.three / result.one).toFixed(2)}x) |`,
  ].join("\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { jobs: { type: "string" }, reps: { type: "string" } } });
  const result = await benchWorkers({
    jobs: Number(values.jobs ?? 60),
    reps: Number(values.reps ?? 3),
    log: (line) => console.error(`[bench] ${line}`),
  });
  console.log(workerRows(result));
}
