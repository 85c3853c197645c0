/**
 * Upgrading from Rein on pg-boss 10: its queue lived in pg-boss 10's default schema
 * (`pgboss`, schema version 24), which pg-boss 12 cannot migrate. A real pg-boss 10
 * (the `pg-boss-10` dev alias) fills that schema the way the old `rein submit` did;
 * then the current `rein worker` starts on the same database, moves the waiting
 * prompt jobs into its own schema and runs each request once, and leaves every other
 * job and queue in the old schema alone.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlStorage, Session, SessionStore } from "@rein/harness";
import { createDatabase, dropDatabase, startPostgres, type TestPostgres } from "@rein/test-postgres";
import pg from "pg";
import PgBoss10 from "pg-boss-10";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeQueue,
  moveLegacyJobs,
  openQueue,
  PROMPT_QUEUE,
  QUEUE_SCHEMA,
} from "../src/worker/prompt-queue.js";
import { REQUEST_ENTRY } from "../src/worker/session-jobs.js";
import { cleanup, project, scriptedConfig, spawnRein } from "./support/rein-process.js";

const MARK_PLUGIN = `import { definePlugin, defineTool, Type } from "@rein/sdk";
import { appendFileSync } from "node:fs";
import { join } from "node:path";

export default definePlugin({
  name: "marks",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "mark",
      description: "Record a mark",
      parameters: Type.Object({}),
      risk: "write",
      execute: async (_args, ctx) => {
        appendFileSync(join(ctx.cwd, "marks.log"), ctx.sessionId + "\\n");
        return { content: [{ type: "text", text: "marked" }] };
      },
    }));
  },
});
`;

let postgres: TestPostgres;
const databases: string[] = [];
const spawned: ChildProcess[] = [];

beforeAll(async () => {
  postgres = await startPostgres();
}, 60_000);

afterAll(async () => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  cleanup();
  for (const db of databases) await dropDatabase(db).catch(() => undefined);
  await postgres?.stop();
});

/** A pg-boss 10 on `url` with Rein's prompt queue, as Rein before pg-boss 12 created it. */
async function legacyBoss(url: string): Promise<PgBoss10> {
  const boss = new PgBoss10({ connectionString: url, max: 2, supervise: false, schedule: false });
  boss.on("error", () => undefined);
  await boss.start();
  await boss.createQueue(PROMPT_QUEUE, { name: PROMPT_QUEUE, policy: "standard", retryLimit: 5 });
  return boss;
}

const finishedStatus = (session: Session): string | undefined => {
  for (const entry of session.entries()) {
    if (entry.type !== "custom" || entry.customType !== REQUEST_ENTRY) continue;
    const data = entry.data as { state?: string; status?: string };
    if (data.state === "finished") return data.status;
  }
  return undefined;
};

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a queue left by pg-boss 10", { timeout: 120_000 }, () => {
  it("rein worker moves the waiting prompt jobs (created and active) into its own queue and runs each request once; other queues stay", async () => {
    const url = await createDatabase(postgres.url, "rein_legacy_queue");
    databases.push(url);
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "mark", args: {} }] }, "done"],
        `plugins: ["./marks.ts"],`,
      ),
      "marks.ts": MARK_PLUGIN,
    });
    const store = new SessionStore(join(dir, ".rein/sessions"));
    const ids = Array.from({ length: 3 }, () => {
      const session = store.create({ cwd: dir });
      session.close();
      return session.id;
    });
    const old = await legacyBoss(url);
    const job = (sessionId: string) => ({
      requestId: randomUUID(),
      sessionId,
      prompt: "mark",
      submittedAt: Date.now(),
    });
    for (const sessionId of ids)
      expect(await old.send(PROMPT_QUEUE, job(sessionId))).toEqual(expect.any(String));
    // One of them taken by a pg-boss 10 worker that then died: active in the old schema.
    const [taken] = await old.fetch(PROMPT_QUEUE);
    expect(taken).toBeDefined();
    // Somebody else's queue in the shared schema.
    await old.createQueue("someone-else", { name: "someone-else", policy: "standard" });
    await old.send("someone-else", { keep: true });
    await old.stop({ graceful: false, wait: true, timeout: 1_000 });

    const worker = spawnRein(["worker", "--db", url, "--poll", "0.5", "--expire", "30"], dir);
    spawned.push(worker);
    let stderr = "";
    worker.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const exit = new Promise((resolve) => worker.on("exit", (code) => resolve(code)));
    await until("the worker to be ready", () => stderr.includes("ready"), 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${stderr}`);
    });
    expect(stderr).toContain("moved 3 waiting prompt job(s) from the pg-boss 10 queue");
    const done = () => stderr.split("\n").filter((line) => / completed$/.test(line)).length;
    await until("the 3 requests to complete", () => done() === 3, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${stderr}`);
    });
    worker.kill("SIGTERM");
    expect(await exit).toBe(0);

    // Each session's request ran once: one mark each, finished as completed.
    const marks = existsSync(join(dir, "marks.log"))
      ? readFileSync(join(dir, "marks.log"), "utf8").trim().split("\n")
      : [];
    expect(marks.sort()).toEqual([...ids].sort());
    for (const id of ids) {
      const session = Session.open(JsonlStorage.open(store.pathOf(id), { readOnly: true }));
      try {
        expect(finishedStatus(session)).toBe("completed");
      } finally {
        session.close();
      }
    }

    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // Nothing of Rein's left waiting in the old schema; the other queue's job untouched.
      const left = await client.query<{ name: string; state: string }>(
        "SELECT name, state::text FROM pgboss.job ORDER BY name",
      );
      expect(left.rows).toEqual([{ name: "someone-else", state: "created" }]);
      // The new queue is in Rein's schema, with the 3 requests completed there.
      const moved = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND state = 'completed'`,
        [PROMPT_QUEUE],
      );
      expect(moved.rows[0]?.n).toBe(3);
    } finally {
      await client.end();
    }
  });

  it("a worker whose database role cannot read the pgboss schema warns and starts anyway", async () => {
    const url = await createDatabase(postgres.url, "rein_legacy_perm");
    databases.push(url);
    const old = await legacyBoss(url);
    await old.stop({ graceful: false, wait: true, timeout: 1_000 });
    const role = `rein_limited_${randomUUID().slice(0, 8)}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const database = new URL(url).pathname.slice(1);
    try {
      // May create Rein's own schema, may not look into pg-boss 10's.
      await admin.query(`CREATE ROLE ${role} LOGIN`);
      await admin.query(`GRANT CREATE ON DATABASE "${database}" TO ${role}`);
      const limited = new URL(url);
      limited.username = role;
      const dir = project({ "rein.config.ts": scriptedConfig(["hi"]) });
      const worker = spawnRein(["worker", "--db", limited.toString(), "--poll", "0.5"], dir);
      spawned.push(worker);
      let stderr = "";
      worker.stderr?.on("data", (chunk) => {
        stderr += chunk;
      });
      const exit = new Promise((resolve) => worker.on("exit", (code) => resolve(code)));
      await until("the worker to be ready", () => stderr.includes("ready"), 60_000).catch((error: Error) => {
        throw new Error(`${error.message}\n${stderr}`);
      });
      expect(stderr).toContain(
        "could not look for a pg-boss 10 queue (schema pgboss): permission denied for schema pgboss",
      );
      worker.kill("SIGTERM");
      expect(await exit).toBe(0);
    } finally {
      // The role owns Rein's schema in that database: the database goes first.
      await admin.end();
      await dropDatabase(url).catch(() => undefined);
      const server = new pg.Client({ connectionString: postgres.url });
      await server.connect();
      await server.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
      await server.end();
    }
  });

  it("moveLegacyJobs is a no-op without a pg-boss 10 schema, and a second worker's move finds nothing left", async () => {
    const url = await createDatabase(postgres.url, "rein_legacy_none");
    databases.push(url);
    const boss = await openQueue(url, { role: "client" });
    try {
      expect(await moveLegacyJobs(url, boss)).toBe(0);
      const old = await legacyBoss(url);
      await old.send(PROMPT_QUEUE, {
        requestId: randomUUID(),
        sessionId: "s-1",
        prompt: "p",
        submittedAt: 1,
      });
      await old.send(PROMPT_QUEUE, { unrelated: true }); // not a prompt job: stays out of Rein's queue
      await old.stop({ graceful: false, wait: true, timeout: 1_000 });
      const [first, second] = await Promise.all([moveLegacyJobs(url, boss), moveLegacyJobs(url, boss)]);
      expect([first, second].sort()).toEqual([0, 1]);
      const [job] = await boss.fetch<{ sessionId: string; prompt: string }>(PROMPT_QUEUE);
      expect(job?.data).toMatchObject({ sessionId: "s-1", prompt: "p" });
      expect(await boss.fetch(PROMPT_QUEUE)).toEqual([]);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const left = await client.query<{ data: unknown }>("SELECT data FROM pgboss.job WHERE name = $1", [
          PROMPT_QUEUE,
        ]);
        expect(left.rows).toEqual([{ data: { unrelated: true } }]);
      } finally {
        await client.end();
      }
    } finally {
      await closeQueue(boss);
    }
  });
});
