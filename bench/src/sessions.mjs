/**
 * Benchmark 3: sessions. For 10,000 and 100,000 message entries, each of Rein
 * (`Session` over `JsonlStorage`) and pi-coding-agent (`SessionManager`) appends
 * the same messages to a JSONL file once, then reopens it and builds the model
 * context several times, interleaved, each case in a fresh child process
 * (see session-worker.mjs) so peak RSS is the case's own. The same rotation times
 * the floor of any JSONL reopen on Rein's file: reading it and JSON.parse of every
 * line, nothing else.
 */
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { median } from "./stats.mjs";

const run = promisify(execFile);
const WORKER = fileURLToPath(new URL("./session-worker.mjs", import.meta.url));
const IMPLS = ["rein", "pi"];
/** Contenders of the reopen rotation: the implementations, and the floor (on Rein's file). */
const REOPENS = [...IMPLS, "floor"];

async function worker(args) {
  const { stdout } = await run(process.execPath, ["--expose-gc", WORKER, ...args], {
    maxBuffer: 1 << 20,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/**
 * `{ [entries]: { [impl]: { appendMs, reopenMs, maxRssMiB, baseRssMiB, fileMiB } } }`, medians;
 * `impl` "floor" has only `reopenMs`, `maxRssMiB` and `baseRssMiB`.
 */
export async function benchSessions({ reps, scale = 1, log = () => {} }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-sessions-"));
  const sizes = [10_000, 100_000];
  const out = {};
  try {
    const cases = [];
    for (const size of sizes) {
      const entries = Math.max(100, Math.round(size * scale));
      log(`sessions: append ${entries} entries once per implementation`);
      out[size] = {};
      for (const impl of IMPLS) {
        const sub = fs.mkdtempSync(path.join(dir, `${impl}-`));
        const appended = await worker(["append", impl, String(entries), sub]);
        out[size][impl] = {
          entries,
          appendMs: appended.ms,
          fileMiB: fs.statSync(appended.file).size / 2 ** 20,
          samples: [],
        };
        cases.push({ size, impl, file: appended.file, entries });
        if (impl === "rein") {
          out[size].floor = { entries, samples: [] };
          cases.push({ size, impl: "floor", file: appended.file, entries });
        }
      }
    }
    // Every reopen case in one rotation, each in a fresh process, so drift hits all alike.
    log(`sessions: reopen + context, ${cases.length} cases x ${reps} reps, interleaved`);
    for (let rep = 0; rep < reps; rep++) {
      for (let i = 0; i < cases.length; i++) {
        const { size, impl, file, entries } = cases[(i + rep) % cases.length];
        const result = await worker(["reopen", impl, file]);
        if (result.messages !== entries) {
          throw new Error(`${impl} reopened ${result.messages} messages, expected ${entries}`);
        }
        out[size][impl].samples.push(result);
      }
    }
    for (const size of sizes) {
      for (const impl of REOPENS) {
        const { samples, ...rest } = out[size][impl];
        out[size][impl] = {
          ...rest,
          reopenMs: median(samples.map((s) => s.ms)),
          maxRssMiB: median(samples.map((s) => s.maxRssMiB)),
          baseRssMiB: median(samples.map((s) => s.baseRssMiB)),
        };
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
