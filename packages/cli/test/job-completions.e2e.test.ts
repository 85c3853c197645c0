import pg from "pg";
import type { PgBoss } from "pg-boss";
import { describe, expect, it } from "vitest";
import { JobCompletions } from "../src/worker/job-completions.js";
import { PROMPT_QUEUE, QUEUE_SCHEMA, submitPrompt } from "../src/worker/prompt-queue.js";
import { postgresForFile, withQueue as withQueueOn } from "./support/queue-database.js";

const postgres = postgresForFile();

function withQueue(test: (boss: PgBoss, url: string) => Promise<void>): Promise<void> {
  return withQueueOn(postgres(), "rein_completions", test);
}

async function jobRows(url: string): Promise<Map<string, { state: string; output: unknown }>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; state: string; output: unknown }>(
      `SELECT id, state, output FROM ${QUEUE_SCHEMA}.job WHERE name = $1`,
      [PROMPT_QUEUE],
    );
    return new Map(rows.map((row) => [row.id, { state: row.state, output: row.output }]));
  } finally {
    await client.end();
  }
}

/** Counts the `complete` statements pg-boss is asked for, passing each call on. */
function countCompletes(boss: PgBoss): { calls: number } {
  const count = { calls: 0 };
  const complete = boss.complete.bind(boss);
  boss.complete = ((...args: Parameters<PgBoss["complete"]>) => {
    count.calls++;
    return complete(...args);
  }) as PgBoss["complete"];
  return count;
}

describe("completing a worker's jobs", () => {
  it("completes the runs that end while a completion is under way in one statement per output, each job with its own output", async () => {
    await withQueue(async (boss, url) => {
      for (let i = 0; i < 5; i++) await submitPrompt(boss, { sessionId: `s${i}`, prompt: "go" });
      const jobs = await boss.fetch(PROMPT_QUEUE, { batchSize: 5 });
      expect(jobs).toHaveLength(5);
      const count = countCompletes(boss);
      const completions = new JobCompletions(boss);
      const attempt = (i: number) => ({
        id: (jobs[i] as { id: string }).id,
        retryCount: (jobs[i] as { retryCount: number }).retryCount,
      });
      const outputs = [
        { status: "completed" },
        { status: "completed" },
        { status: "error" },
        { status: "completed" },
        { status: "error" },
      ];
      // The first goes at once; the other four end while it is under way.
      const done = outputs.map((output, i) => completions.complete(attempt(i), output));
      await Promise.all(done);
      expect(count.calls).toBe(3);
      const rows = await jobRows(url);
      outputs.forEach((output, i) => {
        expect(rows.get(attempt(i).id)).toEqual({ state: "completed", output });
      });
    });
  });

  it("leaves a job retried since its fetch alone while completing the others sent with it", async () => {
    await withQueue(async (boss, url) => {
      await submitPrompt(boss, { sessionId: "stale", prompt: "go" });
      const [first] = await boss.fetch(PROMPT_QUEUE);
      const stale = {
        id: (first as { id: string }).id,
        retryCount: (first as { retryCount: number }).retryCount,
      };
      // Failed and fetched again (as after a lost heartbeat): the first attempt's claim is gone.
      await boss.fail(PROMPT_QUEUE, stale, { message: "lost" });
      await new Promise((resolve) => setTimeout(resolve, 1_300)); // the queue's retryDelay is 1 s
      const [again] = await boss.fetch(PROMPT_QUEUE);
      expect((again as { retryCount: number }).retryCount).toBe(stale.retryCount + 1);
      await submitPrompt(boss, { sessionId: "blocker", prompt: "go" });
      await submitPrompt(boss, { sessionId: "fresh", prompt: "go" });
      const fetched = await boss.fetch(PROMPT_QUEUE, { batchSize: 2 });
      expect(fetched).toHaveLength(2);
      const [blocker, current] = fetched.map((job) => ({ id: job.id, retryCount: job.retryCount })) as [
        { id: string; retryCount: number },
        { id: string; retryCount: number },
      ];
      const count = countCompletes(boss);
      const completions = new JobCompletions(boss);
      const output = { status: "completed" };
      // The blocker goes alone; the stale attempt and the current one go together while it is under way.
      await Promise.all([
        completions.complete(blocker, output),
        completions.complete(stale, output),
        completions.complete(current, output),
      ]);
      expect(count.calls).toBe(2);
      const rows = await jobRows(url);
      expect(rows.get(stale.id)?.state).toBe("active");
      expect(rows.get(current.id)?.state).toBe("completed");
      expect(rows.get(blocker.id)?.state).toBe("completed");
    });
  });

  it("rejects every completion of a statement that failed, and goes on with the next ones", async () => {
    await withQueue(async (boss) => {
      await submitPrompt(boss, { sessionId: "s", prompt: "go" });
      const [job] = await boss.fetch(PROMPT_QUEUE);
      const attempt = {
        id: (job as { id: string }).id,
        retryCount: (job as { retryCount: number }).retryCount,
      };
      const completions = new JobCompletions(boss);
      // Not a job id pg-boss accepts (a uuid): the statement fails, its caller is told.
      await expect(
        completions.complete({ id: "not-a-uuid", retryCount: 0 }, { status: "x" }),
      ).rejects.toThrow();
      await completions.complete(attempt, { status: "completed" });
    });
  });
});
