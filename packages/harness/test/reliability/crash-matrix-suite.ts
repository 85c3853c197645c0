/**
 * Crash matrix, for any session storage (a `CrashBackend`: JSONL in
 * crash-matrix.test.ts, PostgreSQL in packages/store-postgres/test): a child process
 * runs a scripted multi-turn session (tool calls, queued messages, pending writes) on
 * the built harness and is SIGKILLed at a seed-chosen point: before, after or in the
 * middle of (torn: a partly written line; on a database, a statement in flight) the
 * n-th storage append, or inside the n-th event listener; some seeds then kill a
 * second process that reopens the session and goes on. After every kill the parent
 * reopens the session and checks the promises of docs/reliability.md.
 *
 * Seeds: REIN_CRASH_SEEDS (count, default: the backend's), REIN_CRASH_BASE (first
 * seed, default random and printed); REIN_CRASH_SEED=<n> runs that one seed.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createModels, fauxAssistantMessage, fauxProvider, fauxToolCall } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { afterAll, beforeAll } from "vitest";
import { AgentHarness } from "../../src/harness/agent-harness.js";
import type { SessionEntry } from "../../src/session/entries.js";
import { JsonlStorage } from "../../src/session/jsonl-storage.js";
import type { Session } from "../../src/session/session.js";
import { Session as SourceSession } from "../../src/session/session.js";
import { crashTools, random, respond } from "./crash-scenario.mjs";
import { concurrency, ensureBuilt, pool, runNode, sessionProblems, tempDir, textOf } from "./support.js";

const child = path.join(path.dirname(fileURLToPath(import.meta.url)), "crash-child.mjs");
const pi = { fauxAssistantMessage, fauxToolCall, Type };

/** Where the sessions of one storage kind live, for the child and for the parent's checks. */
export interface CrashBackend {
  name: string;
  /** Seeds when REIN_CRASH_SEEDS is not set. */
  defaultSeeds: number;
  start?(): Promise<void>;
  stop?(): Promise<void>;
  /** The child's first argument for a seed: a session file, or a database url. */
  place(dir: string): string;
  /** Fields added to the child's job (`sessionId`: of the session to resume). */
  job(sessionId?: string): Record<string, unknown>;
  /** The id in the stored header, or undefined when it is missing or not a session header. */
  headerId(place: string, sessionId: string): Promise<string | undefined>;
  /** Opens the session (writable and locked, unless `readOnly`). */
  open(place: string, sessionId: string, options?: { readOnly?: boolean }): Promise<Session>;
}

/** Session files in the seed's directory. */
export function jsonlBackend(): CrashBackend {
  return {
    name: "JSONL",
    defaultSeeds: 200,
    place: (dir) => path.join(dir, "session.jsonl"),
    job: () => ({}),
    headerId: async (file) => {
      const bytes = fs.readFileSync(file);
      const header = JSON.parse(bytes.toString("utf8", 0, bytes.indexOf(10)));
      return header.type === "session" ? header.id : undefined;
    },
    open: async (file, _id, options) => SourceSession.open(JsonlStorage.open(file, options)),
  };
}

const single = process.env.REIN_CRASH_SEED;
const base =
  single !== undefined
    ? Number(single)
    : Number(process.env.REIN_CRASH_BASE ?? Math.floor(Math.random() * 1e9));

type Kill =
  | { kind: "append"; index: number; mode: "before" | "after" | "torn"; fraction: number }
  | { kind: "event"; index: number };

interface Golden {
  appends: number;
  events: number;
  keys: string[];
}

interface SeedReport {
  seed: number;
  kills: number;
  /** The process that recovered the crashed file was killed too. */
  killedTwice: boolean;
  problems: string[];
  stats: { torn: boolean; interrupted: boolean; synthesized: number; restored: number; pending: number };
}

/** A key per tree entry: what it says, without ids or timestamps. */
function entryKey(entry: SessionEntry): string {
  switch (entry.type) {
    case "message": {
      const m = entry.message;
      if (m.role === "toolResult") return `toolResult:${m.toolCallId}:${textOf(m)}`;
      if (m.role === "assistant") {
        const calls = m.content.flatMap((b) => (b.type === "toolCall" ? [`${b.id}/${b.name}`] : []));
        return `assistant:${m.stopReason}:${textOf(m)}:${calls.join(",")}`;
      }
      return `user:${textOf(m)}`;
    }
    case "custom":
      return `custom:${String(entry.data)}`;
    case "thinking_level_change":
      return `thinking:${entry.thinkingLevel}`;
    default:
      return entry.type;
  }
}

/** Entries only recovery writes: synthesized results, a closed turn, recovered pending writes. */
function isRecoveryTail(entry: SessionEntry): boolean {
  if (entry.pendingId !== undefined) return true;
  if (entry.type !== "message") return false;
  const m = entry.message;
  if (m.role === "toolResult")
    return (m.details as { interrupted?: boolean } | undefined)?.interrupted === true;
  return (
    m.role === "assistant" && m.stopReason === "aborted" && (m.errorMessage ?? "").startsWith("interrupted")
  );
}

function pickKill(rng: () => number, appends: number, events: number): Kill | undefined {
  const roll = rng();
  if (roll < 0.65) {
    const modes = ["before", "after", "torn"] as const;
    return {
      kind: "append",
      index: 1 + Math.floor(rng() * appends),
      mode: modes[Math.floor(rng() * 3)] as (typeof modes)[number],
      fraction: rng(),
    };
  }
  if (roll < 0.97) return { kind: "event", index: 1 + Math.floor(rng() * events) };
  return undefined; // a clean run: the invariants hold without a crash too
}

function accepted(stdout: string): { queue: [string, string][]; pending: string[]; sessionId?: string } {
  const queue: [string, string][] = [];
  const pending: string[] = [];
  let sessionId: string | undefined;
  for (const line of stdout.split("\n")) {
    const [word, kind, text] = line.split(" ");
    if (word === "session") sessionId = kind;
    if (word !== "accepted" || kind === undefined || text === undefined) continue;
    if (kind === "pending") pending.push(text);
    else queue.push([kind, text]);
  }
  return { queue, pending, ...(sessionId ? { sessionId } : {}) };
}

/**
 * Registers the matrix's setup and teardown for `backend`; the test file runs it and
 * asserts on the result (every seed consistent, most seeds really killed).
 */
export function crashMatrix(backend: CrashBackend): { count: number; run(): Promise<CrashMatrixResult> } {
  let work: string;
  const count = single === undefined ? Number(process.env.REIN_CRASH_SEEDS ?? backend.defaultSeeds) : 1;
  beforeAll(async () => {
    ensureBuilt();
    work = tempDir("rein-crash-");
    await backend.start?.();
  }, 120_000);
  afterAll(async () => {
    if (work) fs.rmSync(work, { recursive: true, force: true });
    await backend.stop?.();
  });

  async function openWithHarness(place: string, sessionId: string) {
    const faux = fauxProvider({ tokenSize: { min: 50, max: 50 } });
    const models = createModels();
    models.setProvider(faux.provider);
    faux.setResponses(
      Array.from({ length: 32 }, () => (context: { messages: unknown[] }) => respond(context, pi)),
    );
    const session = await backend.open(place, sessionId);
    const harness = new AgentHarness({ session, model: faux.getModel(), models, tools: crashTools(pi) });
    return { session, harness, dispose: () => faux.setResponses([]) };
  }

  async function goldenRun(): Promise<Golden> {
    const dir = path.join(work, "golden");
    fs.mkdirSync(dir);
    const file = backend.place(dir);
    const result = await runNode(child, [file, JSON.stringify({ phase: "script", ...backend.job() })]);
    const done = /done (\d+) (\d+)/.exec(result.stdout);
    const sessionId = accepted(result.stdout).sessionId;
    if (result.code !== 0 || !done || !sessionId) throw new Error(`golden run failed: ${result.stderr}`);
    const session = await backend.open(file, sessionId, { readOnly: true });
    const keys = session.branch().map(entryKey);
    await session.close();
    return { appends: Number(done[1]), events: Number(done[2]), keys };
  }

  async function runSeed(seed: number, golden: Golden): Promise<SeedReport> {
    const rng = random(seed);
    const dir = path.join(work, `seed-${seed}`);
    fs.mkdirSync(dir);
    const file = backend.place(dir);
    const problems: string[] = [];
    const stats = { torn: false, interrupted: false, synthesized: 0, restored: 0, pending: 0 };
    let kills = 0;
    let killedTwice = false;

    const first = await runNode(child, [
      file,
      JSON.stringify({
        phase: "script",
        kill: pickKill(rng, golden.appends, golden.events),
        ...backend.job(),
      }),
    ]);
    if (first.signal === "SIGKILL") kills++;
    else if (first.code !== 0) problems.push(`child failed: ${first.stderr.trim()}`);
    const ledger = accepted(first.stdout);
    const sessionId = ledger.sessionId;
    if (sessionId === undefined) {
      // Killed before the session existed (the first append): nothing was promised.
      fs.rmSync(dir, { recursive: true, force: true });
      return { seed, kills, killedTwice, problems, stats };
    }
    let resumed = false;
    if (rng() < 0.3) {
      resumed = true;
      const kill = pickKill(rng, 24, 40);
      const second = await runNode(child, [
        file,
        JSON.stringify({ phase: "resume", kill, ...backend.job(sessionId) }),
      ]);
      if (second.signal === "SIGKILL") {
        kills++;
        killedTwice = true;
      } else if (second.code !== 0) problems.push(`resumed child failed: ${second.stderr.trim()}`);
      const more = accepted(second.stdout);
      ledger.queue.push(...more.queue);
      ledger.pending.push(...more.pending);
    }

    // The header is intact.
    if ((await backend.headerId(file, sessionId)) !== sessionId) problems.push("the header changed");

    const { session, harness, dispose } = await openWithHarness(file, sessionId);
    try {
      stats.torn = session.warnings.some((warning) => warning.includes("torn"));
      const report = harness.recovery;
      stats.interrupted = report?.interruptedRunId !== undefined;
      stats.synthesized = report?.toolResults.length ?? 0;
      stats.restored = report ? report.queues.steer + report.queues.followUp + report.queues.nextTurn : 0;
      stats.pending = report?.pendingWrites ?? 0;
      problems.push(...sessionProblems(session).map((p) => `after recovery: ${p}`));

      // Nothing committed is lost or reordered: the file is a prefix of the uncrashed run,
      // then only what recovery writes.
      if (!resumed) {
        const branch = session.branch();
        let same = 0;
        while (same < branch.length && entryKey(branch[same] as SessionEntry) === golden.keys[same]) same++;
        const extra = branch.slice(same).filter((entry) => !isRecoveryTail(entry));
        if (extra.length > 0)
          problems.push(`not a prefix of the uncrashed run: ${extra.map(entryKey).join(" | ")}`);
      }

      // The session is ready to continue: a new prompt succeeds and consumes what was queued.
      const outcome = await harness.prompt("p-final");
      if (outcome.status !== "completed")
        problems.push(`the new prompt ended ${outcome.status}: ${outcome.reason}`);
      for (const queue of ["steer", "followUp", "nextTurn"] as const) {
        if (harness.queued(queue) !== 0)
          problems.push(`${queue} still holds ${harness.queued(queue)} message(s)`);
      }
      problems.push(...sessionProblems(session).map((p) => `after a new prompt: ${p}`));

      // Every accepted queue message and pending write is in the session exactly once.
      const userTexts = session
        .entries()
        .flatMap((e) => (e.type === "message" && e.message.role === "user" ? [textOf(e.message)] : []));
      for (const [queue, text] of ledger.queue) {
        const times = userTexts.filter((t) => t === text).length;
        if (times !== 1) problems.push(`accepted ${queue} message "${text}" appears ${times} times`);
      }
      const notes = session.entries().flatMap((e) => (e.type === "custom" ? [String(e.data)] : []));
      for (const key of ledger.pending) {
        const times = notes.filter((n) => n === key).length;
        if (times !== 1) problems.push(`accepted pending write "${key}" appears ${times} times`);
      }
      const duplicates = [...userTexts, ...notes].filter((t, i, all) => all.indexOf(t) !== i);
      if (duplicates.length > 0) problems.push(`duplicated: ${duplicates.join(", ")}`);
    } catch (error) {
      problems.push(`reopening failed: ${error instanceof Error ? error.stack : String(error)}`);
    } finally {
      await session.close();
      dispose();
    }

    // Recovery is done once: reopening again finds nothing to repair.
    try {
      const again = await openWithHarness(file, sessionId);
      if (again.harness.recovery !== undefined) problems.push("a second reopen recovered again");
      await again.session.close();
      again.dispose();
    } catch (error) {
      problems.push(`second reopen failed: ${String(error)}`);
    }
    if (problems.length === 0) fs.rmSync(dir, { recursive: true, force: true });
    return { seed, kills, killedTwice, problems, stats };
  }

  return {
    count,
    /** Kills a golden run's replay at `count` seeded points; `detail` lists every seed that broke a promise. */
    async run(): Promise<CrashMatrixResult> {
      const golden = await goldenRun();
      const seeds = Array.from({ length: count }, (_, i) => base + i);
      const reports = await pool(seeds, concurrency(), (seed) => runSeed(seed, golden));
      const failed = reports.filter((r) => r.problems.length > 0);
      const sum = (pick: (r: SeedReport) => number) => reports.reduce((total, r) => total + pick(r), 0);
      const summary = {
        seeds: reports.length,
        base,
        kills: sum((r) => r.kills),
        recoveringProcessKilled: sum((r) => (r.killedTwice ? 1 : 0)),
        tornTails: sum((r) => (r.stats.torn ? 1 : 0)),
        interruptedRuns: sum((r) => (r.stats.interrupted ? 1 : 0)),
        synthesizedResults: sum((r) => r.stats.synthesized),
        restoredQueueMessages: sum((r) => r.stats.restored),
        recoveredPendingWrites: sum((r) => r.stats.pending),
        failed: failed.length,
      };
      console.log(`crash matrix: ${JSON.stringify(summary)}`);
      const detail = failed.map(
        (r) =>
          `seed ${r.seed} (rerun: REIN_CRASH_SEED=${r.seed} pnpm test:reliability):\n  ${r.problems.join("\n  ")}`,
      );
      return { detail, summary };
    },
  };
}

export interface CrashMatrixResult {
  /** One line per seed whose reopened session broke a promise (empty when all held). */
  detail: string[];
  summary: { seeds: number; kills: number; failed: number } & Record<string, number>;
}
