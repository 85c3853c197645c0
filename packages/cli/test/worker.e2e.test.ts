/**
 * `rein worker` through the built binary, on a real PostgreSQL (a throwaway cluster,
 * or REIN_PG_URL), with sessions in PostgreSQL (the queue in the same database, no
 * shared directory) and in a shared JSONL directory: 3 worker processes running 4 jobs
 * each at once (`--concurrency 4`), 50+ sessions of tool-calling prompts on the
 * scripted model, one worker SIGKILLed while it holds several runs mid-tool. Every
 * request completes, every tool call's side effect happens at most once (by call id),
 * and no session ever has two writers (by the tool's own log and by each session's
 * journal).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlStorage, Session, SessionStore } from "@rein/harness";
import { PostgresSessionStore } from "@rein/store-postgres";
import { createDatabase, dropDatabase, startPostgres, type TestPostgres } from "@rein/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeQueue, openQueue, submitPrompt } from "../src/worker/prompt-queue.js";
import { REQUEST_ENTRY } from "../src/worker/session-jobs.js";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";
import {
  killWorkers,
  MARK_PLUGIN,
  type Mark,
  readMarks,
  spawnWorker,
  until,
  type Worker,
} from "./support/workers.js";

/** Sized for CI; `REIN_WORKER_SESSIONS`, `REIN_WORKER_CONCURRENCY`, `REIN_WORKER_HELD` make the larger run in docs/reliability.md. */
const SESSIONS = Number(process.env.REIN_WORKER_SESSIONS ?? 51);

/**
 * `--expire` is well above a run's length even on a loaded machine: these tests are about
 * kills and stops (heartbeats, `--lease`), and an expiry abort mid-run would retry a
 * request the scripted model has no replies left for.
 */
function startWorker(place: Place, grace = "10", extra: string[] = []): Worker {
  return spawnWorker(
    ["--expire", "30", "--poll", "0.5", "--grace", grace, "--lease", "10", ...extra, ...place.dbArgs],
    place.dir,
  );
}

/** Runs at once per worker in the kill test, and how many of them the victim must hold mid-tool. */
const CONCURRENCY = process.env.REIN_WORKER_CONCURRENCY ?? "4";
const HELD_AT_KILL = Number(process.env.REIN_WORKER_HELD ?? 2);

/**
 * Where a test's sessions and queue live. JSONL: a session directory the workers share
 * and the queue in the file's database (`--db`). PostgreSQL: a database of the test's
 * own holding both sessions and queue; workers and submit get no `--db` (the queue
 * defaults to the session store's database).
 */
interface StoreCase {
  name: "jsonl" | "postgres";
  /** A project with `config` as its rein.config.ts after `session` is put in. */
  project(config: (session: string) => string, files: Record<string, string>): Promise<Place>;
}

interface Place {
  dir: string;
  /** Where the queue is, for workers and submit. */
  dbArgs: string[];
  create(count: number): Promise<string[]>;
  /** Every session, read-only (close each). */
  sessions(): Promise<Session[]>;
  read(id: string): Promise<Session>;
}

const STORES: StoreCase[] = [
  {
    name: "jsonl",
    project: async (config, files) => {
      const dir = project({ ...files, "rein.config.ts": config("") });
      const store = new SessionStore(join(dir, ".rein/sessions"));
      return {
        dir,
        dbArgs: ["--db", url],
        create: async (count) =>
          Array.from({ length: count }, () => {
            const session = store.create({ cwd: dir });
            session.close();
            return session.id;
          }),
        sessions: async () =>
          store.list().map((summary) => Session.open(JsonlStorage.open(summary.path, { readOnly: true }))),
        read: async (id) => Session.open(JsonlStorage.open(store.pathOf(id), { readOnly: true })),
      };
    },
  },
  {
    name: "postgres",
    project: async (config, files) => {
      const db = await createDatabase(postgres.url, "rein_worker_store");
      databases.push(db);
      const dir = project({
        ...files,
        "rein.config.ts": config(`session: { store: "postgres", url: ${JSON.stringify(db)} },`),
      });
      const store = new PostgresSessionStore(db);
      return {
        dir,
        dbArgs: [],
        create: async (count) => {
          const ids: string[] = [];
          for (let i = 0; i < count; i++) {
            const session = await store.create({ cwd: dir });
            ids.push(session.id);
            await session.close();
          }
          return ids;
        },
        sessions: async () => {
          const sessions: Session[] = [];
          for (const summary of await store.list())
            sessions.push(await store.open(summary.id, { readOnly: true }));
          return sessions;
        },
        read: (id) => store.open(id, { readOnly: true }),
      };
    },
  },
];

/** The database a PostgreSQL project's config names. */
const sessionDatabase = (dir: string) =>
  (/url: "([^"]+)"/.exec(readFileSync(join(dir, "rein.config.ts"), "utf8")) as RegExpExecArray)[1] as string;

/** The sessions whose request a worker reported done (any status), from the workers' logs. */
function reportedDone(workers: Worker[]): Set<string> {
  const done = new Set<string>();
  for (const worker of workers) {
    for (const line of worker.stderr.split("\n")) {
      const match = /request \S+ \(session ([0-9a-f-]+)\) ([\w-]+)$/.exec(line);
      if (match) done.add(match[1] as string);
    }
  }
  return done;
}

const finishedStatus = (session: Session): string | undefined => {
  for (const entry of session.entries()) {
    if (entry.type !== "custom" || entry.customType !== REQUEST_ENTRY) continue;
    const data = entry.data as { state?: string; status?: string };
    if (data.state === "finished") return data.status;
  }
  return undefined;
};

let postgres: TestPostgres;
let url: string;
const databases: string[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
  url = await createDatabase(postgres.url, "rein_worker");
}, 60_000);

afterAll(async () => {
  killWorkers();
  cleanup();
  for (const db of [url, ...databases]) await dropDatabase(db).catch(() => undefined);
  await postgres?.stop();
});

describe.each(STORES)("rein worker with $name sessions", { timeout: 180_000 }, (store) => {
  it("3 workers x 4 runs at once, 51 sessions, one worker SIGKILLed holding several runs mid-tool: every request completes once, no tool call runs twice, one writer per session", async () => {
    const place = await store.project(
      (session) =>
        scriptedConfig(
          [
            { toolCalls: [{ name: "mark", args: { n: 1 } }] },
            { toolCalls: [{ name: "mark", args: { n: 2 } }] },
            "done",
          ],
          `plugins: ["./marks.ts"], ${session}`,
        ),
      { "marks.ts": MARK_PLUGIN },
    );
    const { dir } = place;
    const ids = await place.create(SESSIONS);
    const started = Date.now();
    const workers = [1, 2, 3].map(() => startWorker(place, "10", ["--concurrency", CONCURRENCY]));
    await until("3 workers ready", () => workers.every((w) => w.stderr.includes("ready")), 90_000).catch(
      (error: Error) => {
        // Say why: each worker's own output (a crash at start shows here).
        throw new Error(`${error.message}\n${workers.map((w, i) => `worker ${i}: ${w.stderr}`).join("\n")}`);
      },
    );
    const queue = store.name === "postgres" ? sessionDatabase(dir) : url;
    if (store.name === "postgres") {
      for (const worker of workers) expect(worker.stderr).toContain(`sessions postgres ${queue}`);
    }

    const boss = await openQueue(queue, { role: "client" });
    for (const sessionId of ids) await submitPrompt(boss, { sessionId, prompt: "mark twice" });
    await closeQueue(boss);

    // Kill the first worker while several of its tool calls are running (started, not ended).
    const victim = workers[0] as Worker;
    const victimPid = victim.child.pid as number;
    let killedAt = 0;
    let killedCalls: Mark[] = [];
    await until(
      `the first worker to be mid tool call in ${HELD_AT_KILL} runs`,
      () => {
        const marks = readMarks(dir);
        const ended = new Set(marks.filter((m) => m.what === "end").map((m) => m.call));
        killedCalls = marks.filter((m) => m.pid === victimPid && m.what === "start" && !ended.has(m.call));
        if (killedCalls.length >= HELD_AT_KILL && marks.filter((m) => m.what === "end").length >= 6) {
          victim.child.kill("SIGKILL");
          killedAt = Date.now();
          return true;
        }
        return false;
      },
      60_000,
      5,
    );
    expect(await victim.exit).toBe(null);

    await until("every request to finish", () => reportedDone(workers).size === SESSIONS, 150_000, 200);
    const elapsed = Date.now() - started;
    const survivors = workers.slice(1);
    const survivorsLog = (all: Worker[]) => all.slice(1).flatMap((w) => w.stderr.split("\n"));
    for (const worker of survivors) worker.child.kill("SIGTERM");
    for (const worker of survivors) expect(await worker.exit).toBe(0);
    for (const worker of survivors) expect(worker.stderr).toContain("stopped");
    process.stderr.write(
      `worker e2e (${store.name}): ${SESSIONS} requests in ${elapsed} ms, 3 workers x ${CONCURRENCY}, the killed one held ${killedCalls.length} runs mid-tool\n`,
    );

    const marks = readMarks(dir);
    // At most once per tool call id: one start line each, and every start by one process.
    const starts = marks.filter((m) => m.what === "start");
    expect(new Set(starts.map((m) => m.call)).size).toBe(starts.length);
    // Each session got its two mark calls done (the killed one may lack its end, never repeat).
    const sessions = await place.sessions();
    try {
      expect(sessions.map((s) => s.id).sort()).toEqual([...ids].sort());
      for (const session of sessions) {
        expect(finishedStatus(session)).toBe("completed");
        // Exactly once: one `finished` mark for the session's one request.
        const finished = session
          .entries()
          .filter(
            (e) =>
              e.type === "custom" &&
              e.customType === REQUEST_ENTRY &&
              (e.data as { state?: string }).state === "finished",
          );
        expect(finished).toHaveLength(1);
        const last = session.buildContext().messages.at(-1);
        expect(last).toMatchObject({ role: "assistant", stopReason: "stop" });
        // Never two writers: the journal's runs never overlap.
        let open = 0;
        for (const record of session.journal()) {
          if (record.event === "run_start") open++;
          if (record.event === "run_end") open--;
          expect(open).toBeLessThanOrEqual(1);
        }
      }
      // Every killed run was recovered and continued by another worker.
      expect(new Set(killedCalls.map((m) => m.session)).size).toBe(killedCalls.length);
      for (const killedCall of killedCalls) {
        const killed = sessions.find((s) => s.id === killedCall.session) as Session;
        expect(killed.journal().some((r) => r.event === "run_end" && r.status === "interrupted")).toBe(true);
        expect(
          survivorsLog(workers).some((line) => line.includes(killed.id) && line.endsWith(" completed")),
        ).toBe(true);
        expect(marks.filter((m) => m.call === killedCall.call && m.what === "end")).toEqual([]);
      }
    } finally {
      for (const session of sessions) await session.close();
    }
    // Sessions live in the configured store only: no JSONL directory with PostgreSQL.
    expect(existsSync(join(dir, ".rein/sessions"))).toBe(store.name === "jsonl");
    // Never two writers, by the tools' own log: per session, a process's tool calls
    // never overlap another process's (the killed process's open call ends at the kill).
    const bySession = new Map<string, Mark[]>();
    for (const mark of marks) bySession.set(mark.session, [...(bySession.get(mark.session) ?? []), mark]);
    for (const list of bySession.values()) {
      const spans = list
        .filter((m) => m.what === "start")
        .map((start) => {
          const end = list.find((m) => m.what === "end" && m.call === start.call);
          return { pid: start.pid, from: start.at, to: end?.at ?? killedAt };
        })
        .sort((a, b) => a.from - b.from);
      for (let i = 1; i < spans.length; i++) {
        const [before, after] = [spans[i - 1], spans[i]] as [(typeof spans)[0], (typeof spans)[0]];
        if (before.pid !== after.pid) expect(before.to).toBeLessThanOrEqual(after.from);
      }
    }
  });

  it("rein submit --follow streams the run's events back and exits like rein run", async () => {
    const place = await store.project(
      (session) =>
        scriptedConfig(
          [{ toolCalls: [{ name: "mark", args: { n: 1 } }] }, "followed to the end"],
          `plugins: ["./marks.ts"], ${session}`,
        ),
      { "marks.ts": MARK_PLUGIN },
    );
    const worker = startWorker(place);
    await until("the worker", () => worker.stderr.includes("ready"), 90_000);
    const result = await rein(["submit", "--follow", "--json", ...place.dbArgs, "mark once"], place.dir);
    expect(result.code, result.stderr).toBe(0);
    const notices = result.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; status?: string; event?: { type: string } });
    const types = notices.filter((n) => n.kind === "event").map((n) => n.event?.type);
    expect(types).toContain("agent_start");
    expect(types).toContain("tool_execution_end");
    expect(notices.at(-1)).toMatchObject({ kind: "end", status: "completed" });
    // The session submit created is in the configured store, holding the finished request.
    const [session] = await place.sessions();
    try {
      expect(finishedStatus(session as Session)).toBe("completed");
    } finally {
      await session?.close();
    }
    worker.child.kill("SIGTERM");
    expect(await worker.exit).toBe(0);
  });

  it("a run that parks on an ask ends its request as parked: submit --follow exits 4, rein approvals answers it, the next request continues it", async () => {
    const place = await store.project(
      (session) =>
        scriptedConfig(
          [{ toolCalls: [{ name: "mark", args: { n: 1 } }] }, "marked after approval"],
          `plugins: ["./marks.ts", "./ask.ts"], approvals: { park: true }, ${session}`,
        ),
      {
        "marks.ts": MARK_PLUGIN,
        "ask.ts": `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "ask-all",
  setup(rein) {
    rein.hooks.toolGate.tap("ask-all", () => ({ decision: "ask", reason: "a person decides" }));
  },
});
`,
      },
    );
    const { dir } = place;
    const worker = startWorker(place);
    await until("the worker", () => worker.stderr.includes("ready"), 90_000);
    const result = await rein(["submit", "--follow", ...place.dbArgs, "mark it"], dir);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain("parked");
    expect(existsSync(join(dir, "marks.log"))).toBe(false);
    const listed = await rein(["approvals", "list", "--json"], dir);
    const approval = JSON.parse(listed.stdout.trim()) as { approvalId: string; sessionId: string };
    expect(approval).toMatchObject({ toolName: "mark", status: "pending" });
    // Answered from another process; the parked run is resumed on the same store.
    const approve = await rein(["approvals", "approve", approval.approvalId], dir);
    expect(approve.code, approve.stderr).toBe(0);
    const resumed = await rein(["run", "--session", approval.sessionId, "--resume"], dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("marked after approval");
    expect(readMarks(dir).filter((m) => m.what === "start")).toHaveLength(1);
    worker.child.kill("SIGTERM");
    expect(await worker.exit).toBe(0);
  });

  it("SIGTERM mid-run: the run is aborted cleanly after the grace period, the worker exits 0, and another worker finishes the request", async () => {
    const place = await store.project(
      (session) =>
        scriptedConfig(
          [{ toolCalls: [{ name: "slow", args: {} }] }, "finished elsewhere"],
          `plugins: ["./slow.ts"], ${session}`,
        ),
      {
        "slow.ts": `import { definePlugin, defineTool, Type } from "@rein/sdk";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
export default definePlugin({
  name: "slow",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "slow",
      description: "Takes a minute unless aborted",
      parameters: Type.Object({}),
      risk: "read",
      execute: (_args, ctx) => new Promise((resolve) => {
        appendFileSync(join(ctx.cwd, "slow.log"), ctx.toolCallId + " " + process.pid + "\\n");
        const timer = setTimeout(() => resolve({ content: [{ type: "text", text: "slow done" }] }), 60_000);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(timer);
          resolve({ content: [{ type: "text", text: "stopped" }], isError: true });
        });
      }),
    }));
  },
});
`,
      },
    );
    const { dir } = place;
    const first = startWorker(place, "0.5");
    await until("the worker", () => first.stderr.includes("ready"), 90_000);
    const submitted = await rein(["submit", ...place.dbArgs, "take your time"], dir);
    expect(submitted.code).toBe(0);
    const { sessionId } = JSON.parse(submitted.stdout) as { sessionId: string };
    await until("the slow tool to start", () => existsSync(join(dir, "slow.log")), 30_000);
    first.child.kill("SIGTERM");
    expect(await first.exit).toBe(0);
    expect(first.stderr).toContain("aborting them");
    expect(first.stderr).toContain("sent back to the queue");

    const second = startWorker(place);
    await until(
      "the request to finish on the second worker",
      () => reportedDone([second]).size === 1,
      60_000,
    );
    second.child.kill("SIGTERM");
    expect(await second.exit).toBe(0);
    const s = await place.read(sessionId);
    try {
      expect(finishedStatus(s)).toBe("completed");
      expect(s.buildContext().messages.at(-1)).toMatchObject({ role: "assistant" });
      expect(JSON.stringify(s.buildContext().messages.at(-1))).toContain("finished elsewhere");
      // The aborted call got its result once and was never run again.
      expect(readFileSync(join(dir, "slow.log"), "utf8").trim().split("\n")).toHaveLength(1);
      const results = s
        .branch()
        .flatMap((e) => (e.type === "message" && e.message.role === "toolResult" ? [e.message] : []));
      expect(results).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});

describe("rein worker configuration", { timeout: 60_000 }, () => {
  it("without --db, REIN_QUEUE_URL or a PostgreSQL session store, worker and submit name the ways to give the queue", async () => {
    const dir = project({ "rein.config.ts": scriptedConfig(["hi"]) });
    for (const args of [["worker"], ["submit", "hello"]]) {
      const result = await rein(args, dir, { env: { REIN_QUEUE_URL: "" } });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("no queue database given");
      expect(result.stderr).toContain('session: { store: "postgres", url }');
    }
  });
});
