import pg from "pg";
import type { PgBoss } from "pg-boss";
import { describe, expect, it } from "vitest";
import { queuedBefore } from "../src/worker/earlier-requests.js";
import { PROMPT_QUEUE, type PromptJob, submitPrompt } from "../src/worker/prompt-queue.js";
import { postgresForFile, withQueue as withQueueOn } from "./support/queue-database.js";

const postgres = postgresForFile();

function withQueue(test: (boss: PgBoss, pool: pg.Pool) => Promise<void>): Promise<void> {
  return withQueueOn(postgres(), "rein_earlier", async (boss, url) => {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    try {
      await test(boss, pool);
    } finally {
      await pool.end();
    }
  });
}

const job = (sessionId: string, requestId: string, submittedAt: number): PromptJob => ({
  sessionId,
  requestId,
  submittedAt,
  prompt: `prompt ${requestId}`,
});

describe("the requests queued before a job", () => {
  it("answers lookups asked for together in one query, each with its own session's earlier requests in order", async () => {
    await withQueue(async (boss, pool) => {
      // Sent out of order: the answer follows submittedAt, not the order sent.
      for (const [sessionId, requestId, at] of [
        ["a", "a2", 20],
        ["a", "a1", 10],
        ["b", "b1", 10],
        ["a", "a3", 30],
        ["b", "b2", 50],
      ] as const)
        await submitPrompt(boss, { sessionId, requestId, submittedAt: at, prompt: `prompt ${requestId}` });
      let queries = 0;
      const query = pool.query.bind(pool);
      pool.query = ((...args: Parameters<typeof query>) => {
        queries++;
        return (query as (...a: unknown[]) => unknown)(...args);
      }) as typeof pool.query;
      const [first, forA3, forB2, forA1] = await Promise.all([
        queuedBefore(pool, job("c", "c1", 5)),
        queuedBefore(pool, job("a", "a3", 30)),
        queuedBefore(pool, job("b", "b2", 50)),
        queuedBefore(pool, job("a", "a1", 10)),
      ]);
      // The first goes at once; the three asked for while it was under way share one query.
      expect(queries).toBe(2);
      expect(first).toEqual([]);
      expect(forA3.map((j) => j.requestId)).toEqual(["a1", "a2"]);
      expect(forA3[0]).toMatchObject({ sessionId: "a", prompt: "prompt a1", submittedAt: 10 });
      expect(forB2.map((j) => j.requestId)).toEqual(["b1"]);
      expect(forA1).toEqual([]);
    });
  });

  it("leaves settled requests out: only those still waiting or held count", async () => {
    await withQueue(async (boss, pool) => {
      await submitPrompt(boss, { sessionId: "s", requestId: "done", submittedAt: 1, prompt: "p" });
      const [taken] = await boss.fetch(PROMPT_QUEUE);
      await boss.complete(PROMPT_QUEUE, (taken as { id: string }).id);
      await submitPrompt(boss, { sessionId: "s", requestId: "held", submittedAt: 2, prompt: "p" });
      await boss.fetch(PROMPT_QUEUE); // active: held by a worker
      await submitPrompt(boss, { sessionId: "s", requestId: "waiting", submittedAt: 3, prompt: "p" });
      const earlier = await queuedBefore(pool, job("s", "mine", 4));
      expect(earlier.map((j) => j.requestId)).toEqual(["held", "waiting"]);
    });
  });

  it("fails no other session's lookup over a malformed job, and leaves that job out of its own session's", async () => {
    await withQueue(async (boss, pool) => {
      await boss.send(PROMPT_QUEUE, {
        sessionId: "bad",
        requestId: "m",
        prompt: "p",
        submittedAt: "not a number",
      });
      await submitPrompt(boss, { sessionId: "bad", requestId: "ok", submittedAt: 1, prompt: "p" });
      await submitPrompt(boss, { sessionId: "good", requestId: "g1", submittedAt: 1, prompt: "p" });
      const [bad, good] = await Promise.all([
        queuedBefore(pool, job("bad", "later", 9)),
        queuedBefore(pool, job("good", "g2", 9)),
      ]);
      expect(bad.map((j) => j.requestId)).toEqual(["ok"]);
      expect(good.map((j) => j.requestId)).toEqual(["g1"]);
    });
  });
});
