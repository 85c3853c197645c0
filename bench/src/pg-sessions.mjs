/**
 * Benchmark 3b: sessions in PostgreSQL (@rein/store-postgres) against JSONL, the
 * same 10,000 messages as benchmark 3: append (as one burst, and awaiting every
 * write as the harness does per message) and reopen + build context. Each case in
 * a fresh process; reopen cases interleaved. The server is the one named by
 * REIN_PG_URL, else a throwaway local cluster (@rein/test-postgres) with
 * `fsync=off` (so the rows compare round trips and statements, not disks; JSONL's
 * append does fsync at the end).
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { PostgresSessionStore } from "@rein/store-postgres";
import { createDatabase, dropDatabase, startPostgres } from "@rein/test-postgres";
import { median } from "./stats.mjs";

const run = promisify(execFile);
const PG_WORKER = fileURLToPath(new URL("./pg-session-worker.mjs", import.meta.url));
const JSONL_WORKER = fileURLToPath(new URL("./session-worker.mjs", import.meta.url));

async function worker(script, args) {
  const { stdout } = await run(process.execPath, ["--expose-gc", script, ...args], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/** `{ entries, jsonl: { appendMs, reopenMs }, pg: { burstMs, awaitedMs, reopenMs } }`, medians. */
export async function benchPgSessions({ reps, scale = 1, log = () => {} }) {
  const entries = Math.max(100, Math.round(10_000 * scale));
  const server = await startPostgres();
  const url = await createDatabase(server.url, "rein_bench");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-pg-"));
  try {
    await new PostgresSessionStore(url).ready();
    log(`pg sessions: append ${entries} entries (JSONL, postgres burst, postgres awaited)`);
    const jsonl = await worker(JSONL_WORKER, ["append", "rein", String(entries), dir]);
    const burst = await worker(PG_WORKER, ["append", "burst", String(entries), url]);
    const awaited = await worker(PG_WORKER, ["append", "awaited", String(entries), url]);
    log(`pg sessions: reopen + context, 2 cases x ${reps} reps, interleaved`);
    const samples = { jsonl: [], pg: [] };
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 === 0 ? ["jsonl", "pg"] : ["pg", "jsonl"];
      for (const kind of order) {
        const result =
          kind === "jsonl"
            ? await worker(JSONL_WORKER, ["reopen", "rein", jsonl.file])
            : await worker(PG_WORKER, ["reopen", url, burst.id]);
        if (result.messages !== entries) throw new Error(`${kind} reopened ${result.messages} of ${entries}`);
        samples[kind].push(result.ms);
      }
    }
    return {
      entries,
      jsonl: { appendMs: jsonl.ms, reopenMs: median(samples.jsonl) },
      pg: { burstMs: burst.ms, awaitedMs: awaited.ms, reopenMs: median(samples.pg) },
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await dropDatabase(url).catch(() => {});
    await server.stop();
  }
}

const ms = (value) => `${value.toFixed(value < 100 ? 1 : 0)} ms`;
const x = (value) => `${value.toFixed(2)}×`;

export function pgSessionRows({ entries, jsonl, pg }) {
  const group = "3b. Sessions in PostgreSQL (@rein/store-postgres) vs JSONL, same messages";
  const n = entries.toLocaleString("en-US");
  const row = (name, measured, ratio) => ({ group, name, measured, ratio, target: "", met: "" });
  return [
    row(
      `append ${n} entries, one burst (writes batched per round trip)`,
      `${ms(pg.burstMs)} vs ${ms(jsonl.appendMs)}`,
      `${x(pg.burstMs / jsonl.appendMs)} JSONL`,
    ),
    row(
      `append ${n} entries, awaiting each write (one transaction each)`,
      `${ms(pg.awaitedMs)} vs ${ms(jsonl.appendMs)}`,
      `${x(pg.awaitedMs / jsonl.appendMs)} JSONL`,
    ),
    row(
      `reopen + build context, ${n} entries`,
      `${ms(pg.reopenMs)} vs ${ms(jsonl.reopenMs)}`,
      `${x(pg.reopenMs / jsonl.reopenMs)} JSONL`,
    ),
  ];
}
