/**
 * The session lock under real races: a holder is SIGKILLed, leaving a stale lock, and
 * then several processes race to take it over, released at once. Every round has
 * exactly one opener and exactly one writer; every other racer is told the session is
 * in use. Rounds run plain and with random stalls inside the takeover (every read of a
 * lock file and every rename sleeps first), the window in which two processes used to
 * both take one stale lock over.
 */
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonlStorage } from "../../src/session/jsonl-storage.js";
import { Session } from "../../src/session/session.js";
import { createSessionHeader } from "../../src/session/storage.js";
import { ensureBuilt, tempDir } from "./support.js";

const child = path.join(path.dirname(fileURLToPath(import.meta.url)), "lock-child.mjs");
const RACERS = 5;
let work: string;
const started: ChildProcess[] = [];

beforeAll(() => {
  ensureBuilt();
  work = tempDir("rein-lock-race-");
});
afterAll(() => {
  for (const proc of started) if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

interface Racer {
  proc: ChildProcess;
  /** Resolves with the first line after `ready` (`opened ...` or `failed ...`). */
  outcome: Promise<string>;
  ready: Promise<void>;
}

function startRacer(file: string, mode: "hold" | "race", stallMs: number): Racer {
  const proc = spawn(process.execPath, [child, file, mode, String(stallMs)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  started.push(proc);
  let out = "";
  let onReady: () => void = () => undefined;
  let onOutcome: (line: string) => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  const outcome = new Promise<string>((resolve) => {
    onOutcome = resolve;
  });
  proc.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    for (const line of out.split("\n").slice(0, -1)) {
      if (line === "ready") onReady();
      else if (line.startsWith("opened") || line.startsWith("failed")) onOutcome(line);
    }
  });
  proc.on("exit", (code, signal) => onOutcome(`exited ${code ?? signal}: ${out}`));
  return { proc, outcome, ready };
}

async function kill(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const gone = new Promise((resolve) => proc.once("exit", resolve));
  proc.kill("SIGKILL");
  await gone;
}

/** One round: a SIGKILLed holder, then `RACERS` processes released together. */
async function round(name: string, stallMs: number) {
  const file = path.join(work, `${name}.jsonl`);
  Session.create(JsonlStorage.create(file, createSessionHeader())).close();
  const holder = startRacer(file, "hold", 0);
  expect(await holder.outcome).toMatch(/^opened /);
  await kill(holder.proc);
  expect(fs.existsSync(`${file}.lock`)).toBe(true); // stale: its holder is dead

  const racers = Array.from({ length: RACERS }, () => startRacer(file, "race", stallMs));
  await Promise.all(racers.map((racer) => racer.ready));
  for (const racer of racers) racer.proc.stdin?.write("go\n");
  const lines = await Promise.all(racers.map((racer) => racer.outcome));
  for (const racer of racers) await kill(racer.proc);

  const reopened = Session.open(JsonlStorage.open(file, { readOnly: true }));
  const writers = reopened
    .entries()
    .filter((entry) => entry.type === "custom" && entry.customType === "writer")
    .map((entry) => (entry as { data: { pid: number } }).data.pid);
  reopened.close();
  return {
    opened: lines.filter((line) => line.startsWith("opened")).length,
    inUse: lines.filter((line) => line.startsWith("failed session_in_use session in use")).length,
    // The holder wrote once before it was killed; the racers' writes follow.
    writers: writers.length - 1,
    lines,
  };
}

describe("session lock races between real processes", () => {
  it(`after a SIGKILLed holder, ${RACERS} racing openers per round: exactly one writer every round`, async () => {
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await round(`plain-${i}`, 0));
    for (let i = 0; i < 4; i++) results.push(await round(`stalled-${i}`, 40));
    console.log(
      `lock races: ${JSON.stringify(results.map(({ opened, inUse, writers }) => ({ opened, inUse, writers })))}`,
    );
    for (const result of results) {
      expect(result, result.lines.join("\n")).toMatchObject({ opened: 1, inUse: RACERS - 1, writers: 1 });
    }
  }, 240_000);
});
