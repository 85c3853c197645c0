/**
 * `rein worker` in production conditions, through the built binary on a PostgreSQL
 * cluster of this file's own (so it can be restarted), sessions and queue in one
 * database: a database restart under idle and busy workers, a lock holder frozen by
 * SIGSTOP (and, for comparison, SIGKILLed) with a later request of its session queued,
 * a tool that ignores the abort under `--grace`, prompts queued behind a parked run,
 * an answer far over NOTIFY's 8000 bytes through `submit --follow`, and jobs put into
 * the queue by hand that are not prompt jobs.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Session } from "@rein/harness";
import { PostgresSessionStore } from "@rein/store-postgres";
import {
  createDatabase,
  type RunningCluster,
  restartCluster,
  startCluster,
  stopCluster,
} from "@rein/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtlpReceiver } from "../../plugins/plugin-otel/test/support/otlp-receiver.js";
import { closeQueue, openQueue, PROMPT_QUEUE, submitPrompt } from "../src/worker/prompt-queue.js";
import { REQUEST_ENTRY } from "../src/worker/session-jobs.js";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";
import { killWorkers, MARK_PLUGIN, readMarks, spawnWorker, until, type Worker } from "./support/workers.js";

const OTEL_DIST = join(import.meta.dirname, "../../plugins/plugin-otel/dist/index.js");

let cluster: RunningCluster;

beforeAll(async () => {
  cluster = await startCluster();
}, 60_000);

afterAll(() => {
  killWorkers();
  cleanup();
  if (cluster) stopCluster(cluster.dir);
});

/** A tool that takes `ms` (default 1500) and ignores the abort signal unless `stoppable`. */
const SLOW_PLUGIN = `import { definePlugin, defineTool, Type } from "@rein/sdk";
import { appendFileSync } from "node:fs";
import { join } from "node:path";
export default definePlugin({
  name: "slow",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "stubborn",
      description: "Takes its time and ignores the abort",
      parameters: Type.Object({ ms: Type.Number() }),
      risk: "read",
      execute: async (args, ctx) => {
        appendFileSync(join(ctx.cwd, "stubborn.log"), ctx.toolCallId + " " + process.pid + "\\n");
        await new Promise((resolve) => setTimeout(resolve, args.ms));
        return { content: [{ type: "text", text: "done at last" }] };
      },
    }));
  },
});
`;

const ASK_PLUGIN = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "ask-all",
  setup(rein) {
    rein.hooks.toolGate.tap("ask-all", () => ({ decision: "ask", reason: "a person decides" }));
  },
});
`;

interface Place {
  dir: string;
  db: string;
  store: PostgresSessionStore;
  worker(extra?: string[]): Worker;
  session(): Promise<string>;
  read(id: string): Promise<Session>;
}

/** `plugins`: specifiers, or the config's plugins list as code (an entry with options). */
async function place(
  script: unknown[],
  plugins: string[] | { code: string },
  files: Record<string, string>,
  extra = "",
) {
  const db = await createDatabase(cluster.url, "rein_resilience");
  const list = Array.isArray(plugins) ? JSON.stringify(plugins) : plugins.code;
  const dir = project({
    ...files,
    "rein.config.ts": scriptedConfig(
      script,
      `plugins: ${list}, ${extra} session: { store: "postgres", url: ${JSON.stringify(db)} },`,
    ),
  });
  const store = new PostgresSessionStore(db);
  const result: Place = {
    dir,
    db,
    store,
    worker: (extra = []) =>
      spawnWorker(["--poll", "0.5", "--lease", "10", "--expire", "120", "--grace", "10", ...extra], dir),
    session: async () => {
      const session = await store.create({ cwd: dir });
      await session.close();
      return session.id;
    },
    read: (id) => store.open(id, { readOnly: true }),
  };
  return result;
}

const ready = (worker: Worker) =>
  until("the worker to be ready", () => worker.stderr.includes("ready"), 90_000);

/** The `rein.request` marks of a session, in order, as "requestId state[:status]". */
function marks(session: Session): { requestId: string; state: string; status?: string }[] {
  return session
    .entries()
    .flatMap((entry) =>
      entry.type === "custom" && entry.customType === REQUEST_ENTRY
        ? [entry.data as { requestId: string; state: string; status?: string }]
        : [],
    );
}

const userPrompts = (session: Session) =>
  session
    .buildContext()
    .messages.flatMap((m) =>
      m.role !== "user"
        ? []
        : typeof m.content === "string"
          ? [m.content]
          : [m.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")],
    );

async function submitAll(db: string, sessionId: string, prompts: string[]): Promise<string[]> {
  const boss = await openQueue(db, { role: "client" });
  try {
    const ids: string[] = [];
    for (const prompt of prompts) ids.push(await submitPrompt(boss, { sessionId, prompt }));
    return ids;
  } finally {
    await closeQueue(boss);
  }
}

describe("a worker that survives production", { timeout: 180_000 }, () => {
  it("a database restart under an idle worker and a busy one: no crash, the run in flight is finished once, new jobs run", async () => {
    const p = await place(
      [{ toolCalls: [{ name: "mark", args: { n: 1 } }] }, "after the restart"],
      ["./marks.ts"],
      { "marks.ts": MARK_PLUGIN.replace("setTimeout(resolve, 120)", "setTimeout(resolve, 2500)") },
    );
    const idle = p.worker();
    const busy = p.worker();
    await Promise.all([ready(idle), ready(busy)]);
    const first = await p.session();
    // Followed: the follower loses its connection too, and says so instead of waiting forever.
    const follow = rein(["submit", "--follow", "--session", first, "mark once"], p.dir);
    await until("the tool to be running", () => readMarks(p.dir).length > 0, 60_000);
    await restartCluster(cluster.dir);
    const followed = await follow;
    expect(followed.code, followed.stderr).toBe(1);
    expect(followed.stderr).toContain("lost the queue database while following request");
    const firstRequest = (/submitted request (\S+) /.exec(followed.stderr) as RegExpExecArray)[1];
    // Both workers live on; the request interrupted by the restart is finished exactly once.
    const second = await p.session();
    await submitAll(p.db, second, ["mark again"]);
    const done = (id: string) => () =>
      [idle, busy].some((w) => new RegExp(`\\(session ${id}\\) completed`).test(w.stderr));
    await until("the interrupted request to finish", done(first), 120_000, 200);
    await until("a request after the restart to finish", done(second), 60_000, 200);
    for (const worker of [idle, busy]) {
      expect(worker.child.exitCode, worker.stderr).toBe(null);
      expect(worker.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    const session = await p.read(first);
    const finished = marks(session).filter((m) => m.requestId === firstRequest && m.state === "finished");
    expect(finished).toEqual([{ requestId: firstRequest, state: "finished", status: "completed" }]);
    // At most once per tool call.
    const starts = readMarks(p.dir).filter((m) => m.what === "start");
    expect(new Set(starts.map((m) => m.call)).size).toBe(starts.length);
    await session.close();
    for (const worker of [idle, busy]) worker.child.kill("SIGTERM");
    for (const worker of [idle, busy]) expect(await worker.exit, worker.stderr).toBe(0);
  });

  it.each(["SIGSTOP", "SIGKILL"] as const)(
    "a lock holder %s mid-tool: another worker recovers the run within the lease, then runs the session's next request after it",
    async (signal) => {
      const p = await place(
        [{ toolCalls: [{ name: "mark", args: { n: 1 } }] }, "first request done", "second request done"],
        ["./marks.ts"],
        { "marks.ts": MARK_PLUGIN.replace("setTimeout(resolve, 120)", "setTimeout(resolve, 4000)") },
      );
      const holder = p.worker();
      await ready(holder);
      const id = await p.session();
      const [firstRequest] = await submitAll(p.db, id, ["first"]);
      await until("the tool to be running", () => readMarks(p.dir).length > 0, 60_000);
      holder.child.kill(signal);
      const frozenAt = Date.now();
      // Queued behind the frozen run: it must run after the interrupted one is finished.
      const [secondRequest] = await submitAll(p.db, id, ["second"]);
      const rescuer = p.worker();
      await until(
        "the second request to finish elsewhere",
        () => new RegExp(`request ${secondRequest} \\(session ${id}\\) completed`).test(rescuer.stderr),
        90_000,
        200,
      );
      const took = Date.now() - frozenAt;
      // Lease 10 s (job heartbeat and session lock); checks every 5 s, retry after 1 s.
      expect(took).toBeLessThan(40_000);
      if (signal === "SIGSTOP") holder.child.kill("SIGCONT");
      const session = await p.read(id);
      try {
        expect(
          marks(session).map((m) => `${m.requestId === firstRequest ? "first" : "second"} ${m.state}`),
        ).toEqual(["first started", "first finished", "second started", "second finished"]);
        expect(userPrompts(session).slice(0, 1)).toEqual(["first"]);
        expect(userPrompts(session).at(-1)).toBe("second");
        expect(session.journal().some((r) => r.event === "run_end" && r.status === "interrupted")).toBe(true);
      } finally {
        await session.close();
      }
      // The woken holder writes nothing more: the session is as the rescuer left it.
      if (signal === "SIGSTOP") {
        await new Promise((resolve) => setTimeout(resolve, 5_000));
        const after = await p.read(id);
        expect(marks(after)).toHaveLength(4);
        await after.close();
        holder.child.kill("SIGKILL");
      }
      const starts = readMarks(p.dir).filter((m) => m.what === "start");
      expect(starts).toHaveLength(1); // the interrupted call was not run again
      rescuer.child.kill("SIGTERM");
      expect(await rescuer.exit).toBe(0);
    },
  );

  it("--grace bounds the stop when a tool ignores the abort; another worker finishes the request", async () => {
    const p = await place(
      [{ toolCalls: [{ name: "stubborn", args: { ms: 20_000 } }] }, "finished elsewhere"],
      ["./slow.ts"],
      { "slow.ts": SLOW_PLUGIN },
    );
    const first = p.worker(["--grace", "1"]);
    await ready(first);
    const id = await p.session();
    await submitAll(p.db, id, ["take your time"]);
    await until("the tool to start", () => existsSync(join(p.dir, "stubborn.log")), 60_000);
    const stoppedAt = Date.now();
    first.child.kill("SIGTERM");
    expect(await first.exit).toBe(0);
    // grace 1 s + 2 s for the aborted run + sending it back: far from the tool's 20 s.
    expect(Date.now() - stoppedAt).toBeLessThan(7_000);
    expect(first.stderr).toContain("ignoring it");
    const second = p.worker();
    await until(
      "the request to finish",
      () => second.stderr.includes(`(session ${id}) completed`),
      60_000,
      200,
    );
    expect(readFileSync(join(p.dir, "stubborn.log"), "utf8").trim().split("\n")).toHaveLength(1);
    const session = await p.read(id);
    expect(JSON.stringify(session.buildContext().messages.at(-1))).toContain("finished elsewhere");
    await session.close();
    second.child.kill("SIGTERM");
    expect(await second.exit).toBe(0);
  });

  it("prompts queued behind a parked run wait for it and run after it, in order, once it is approved", async () => {
    const p = await place(
      [{ toolCalls: [{ name: "mark", args: { n: 1 } }] }, "marked after approval", "answer B", "answer C"],
      ["./marks.ts", "./ask.ts"],
      { "marks.ts": MARK_PLUGIN, "ask.ts": ASK_PLUGIN },
      "approvals: { park: true },",
    );
    const worker = p.worker();
    await ready(worker);
    const parked = await rein(["submit", "--follow", "mark it"], p.dir);
    expect(parked.code, parked.stderr).toBe(4);
    const listed = await rein(["approvals", "list", "--json"], p.dir);
    const approval = JSON.parse(listed.stdout.trim()) as { approvalId: string; sessionId: string };
    const [b, c] = await submitAll(p.db, approval.sessionId, ["B", "C"]);
    await until(
      "B to wait",
      () => worker.stderr.includes(`request ${b} (session ${approval.sessionId}) waiting`),
      30_000,
    );
    // Waiting, not finished: nothing ran.
    const before = await p.read(approval.sessionId);
    expect(marks(before).filter((m) => m.requestId === b || m.requestId === c)).toEqual([]);
    await before.close();
    const approve = await rein(["approvals", "approve", approval.approvalId], p.dir);
    expect(approve.code, approve.stderr).toBe(0);
    await until(
      "C to finish",
      () => worker.stderr.includes(`request ${c} (session ${approval.sessionId}) completed`),
      60_000,
      200,
    );
    const session = await p.read(approval.sessionId);
    try {
      expect(userPrompts(session)).toEqual(["mark it", "B", "C"]);
      const text = JSON.stringify(session.buildContext().messages);
      expect(text.indexOf("marked after approval")).toBeLessThan(text.indexOf("answer B"));
      expect(text.indexOf("answer B")).toBeLessThan(text.indexOf("answer C"));
    } finally {
      await session.close();
    }
    expect(readMarks(p.dir).filter((m) => m.what === "start")).toHaveLength(1);
    worker.child.kill("SIGTERM");
    expect(await worker.exit).toBe(0);
  });

  it("the submitter's trace (TRACEPARENT) continues in the worker that runs the job", async () => {
    const receiver = await startOtlpReceiver();
    try {
      const otel = `[${JSON.stringify(OTEL_DIST)}, { endpoint: ${JSON.stringify(receiver.url)}, batchDelayMs: 10 }]`;
      const p = await place(["traced answer"], { code: `[${otel}]` }, {});
      const worker = p.worker();
      await ready(worker);
      const traceparent = "00-8a3c60f7d188f8fa79d48a391a778fa6-53995c3f42cd8ad8-01";
      const result = await rein(["submit", "--follow", "go"], p.dir, { env: { TRACEPARENT: traceparent } });
      expect(result.code, result.stderr).toBe(0);
      await receiver.waitFor((spans) => spans.some((span) => span.name === "invoke_agent rein"));
      const run = receiver.spans.find((span) => span.name === "invoke_agent rein");
      expect(run?.traceId).toBe("8a3c60f7d188f8fa79d48a391a778fa6");
      expect(run?.parentSpanId).toBe("53995c3f42cd8ad8");
      worker.child.kill("SIGTERM");
      expect(await worker.exit).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it("an answer far over NOTIFY's 8000 bytes reaches submit --follow whole", async () => {
    const long = Array.from({ length: 4000 }, (_, i) => `line ${i} of a long answer.`).join(" ");
    const p = await place([long], [], {});
    const worker = p.worker();
    await ready(worker);
    const result = await rein(["submit", "--follow", "write a lot"], p.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(long);
    const json = await rein(["submit", "--follow", "--json", "again"], p.dir);
    const end = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; event?: { type: string; message?: unknown } })
      .find(
        (n) =>
          n.kind === "event" &&
          n.event?.type === "message_end" &&
          (n.event.message as { role?: string }).role === "assistant",
      );
    expect(JSON.stringify(end?.event?.message)).toContain("line 3999 of a long answer.");
    worker.child.kill("SIGTERM");
    expect(await worker.exit).toBe(0);
  });

  it("jobs that are not prompt jobs are refused with their reason logged, creating and touching no session", async () => {
    const p = await place(["never"], [], {});
    const existing = await p.session();
    const boss = await openQueue(p.db, { role: "client" });
    const bad: [unknown, RegExp][] = [
      [{}, /requestId is missing/],
      [{ requestId: "r1", prompt: "hi", submittedAt: 1 }, /sessionId is missing/],
      [{ requestId: "r2", sessionId: existing, submittedAt: 1 }, /prompt is missing/],
      [{ sessionId: existing, prompt: "no request id", submittedAt: 1 }, /requestId is missing/],
      [{ requestId: "r3", sessionId: "no-such-session", prompt: "hi", submittedAt: 1 }, /no session/],
      [
        { requestId: "r4", sessionId: existing.slice(0, 6), prompt: "a prefix", submittedAt: 1 },
        /no session/,
      ],
      [
        { requestId: "r5", sessionId: "x'; DROP TABLE rein_sessions; --", prompt: "hi", submittedAt: 1 },
        /not an id/,
      ],
    ];
    const ids: string[] = [];
    for (const [data] of bad) ids.push((await boss.send(PROMPT_QUEUE, data as object)) as string);
    await closeQueue(boss);
    const worker = p.worker();
    await until(
      "every bad job to be refused",
      () => (worker.stderr.match(/refused/g) ?? []).length >= bad.length,
      60_000,
    );
    for (const [i, [, reason]] of bad.entries()) {
      const line = worker.stderr.split("\n").find((l) => l.includes(`refused job ${ids[i]}`));
      expect(line, `job ${i}: ${worker.stderr}`).toMatch(reason);
    }
    const sessions = await p.store.list();
    expect(sessions.map((s) => s.id)).toEqual([existing]);
    expect(sessions[0]?.entryCount).toBe(0);
    worker.child.kill("SIGTERM");
    expect(await worker.exit).toBe(0);
  });
});
