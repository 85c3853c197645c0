import pg from "pg";
import type { PgBoss } from "pg-boss";
import { describe, expect, it } from "vitest";
import { JobSlots } from "../src/worker/job-slots.js";
import { PROMPT_QUEUE, QUEUE_SCHEMA, submitPrompt } from "../src/worker/prompt-queue.js";
import { postgresForFile, withQueue as withQueueOn } from "./support/queue-database.js";

const postgres = postgresForFile();

function withQueue(test: (boss: PgBoss, url: string) => Promise<void>): Promise<void> {
  return withQueueOn(postgres(), "rein_slots", test);
}

async function until(check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function states(url: string): Promise<Record<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM ${QUEUE_SCHEMA}.job WHERE name = $1 GROUP BY state`,
      [PROMPT_QUEUE],
    );
    return Object.fromEntries(rows.map((row) => [row.state, row.n]));
  } finally {
    await client.end();
  }
}

const send = (boss: PgBoss, n: number) =>
  Promise.all(Array.from({ length: n }, (_, i) => submitPrompt(boss, { sessionId: `s${i}`, prompt: "go" })));

describe("rein worker's run slots", () => {
  it("holds at most `concurrency` jobs, leaves the rest queued, and takes them as slots free", async () => {
    await withQueue(async (boss, url) => {
      await send(boss, 7);
      let running = 0;
      let most = 0;
      const gates: Array<() => void> = [];
      const slots = new JobSlots(
        boss,
        { concurrency: 3, pollSeconds: 0.5, heartbeatSeconds: 10, onError: () => undefined },
        async () => {
          running++;
          most = Math.max(most, running);
          await new Promise<void>((resolve) => gates.push(resolve));
          running--;
          return { ok: true };
        },
      );
      await slots.start();
      try {
        await until(() => gates.length === 3, 10_000);
        // A full worker takes no more: the other four stay in the queue, unclaimed.
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        expect(slots.size).toBe(3);
        expect(await states(url)).toEqual({ active: 3, created: 4 });
        let released = 0;
        while (released < 7) {
          await until(() => gates.length > 0, 10_000);
          (gates.shift() as () => void)();
          released++;
        }
        await until(async () => (await states(url)).completed === 7, 10_000);
        expect(most).toBe(3);
      } finally {
        await slots.stop();
        await slots.settled();
        slots.close();
      }
    });
  }, 60_000);

  it("an idle worker takes a job when it is sent (NOTIFY), not at its next poll", async () => {
    await withQueue(async (boss) => {
      const started: number[] = [];
      const slots = new JobSlots(
        boss,
        // A poll far beyond the test: only the NOTIFY can wake the loop in time.
        { concurrency: 4, pollSeconds: 60, heartbeatSeconds: 10, onError: () => undefined },
        async () => {
          started.push(Date.now());
          return {};
        },
      );
      await slots.start();
      try {
        // The first fetch (at start) found nothing; the loop now sleeps for 60 s.
        await new Promise((resolve) => setTimeout(resolve, 500));
        const sentAt = Date.now();
        await send(boss, 1);
        await until(() => started.length === 1, 20_000);
        // Far sooner than the 60 s poll (a loaded machine's NOTIFY still arrives in well under 5 s).
        expect((started[0] as number) - sentAt).toBeLessThan(5_000);
      } finally {
        await slots.stop();
        await slots.settled();
        slots.close();
      }
    });
  }, 60_000);

  it("a run whose job was settled elsewhere has its signal aborted by the heartbeat", async () => {
    await withQueue(async (boss, url) => {
      await send(boss, 1);
      let signal: AbortSignal | undefined;
      let jobId: string | undefined;
      const slots = new JobSlots(
        boss,
        // Touched every second.
        { concurrency: 2, pollSeconds: 0.5, heartbeatSeconds: 2, onError: () => undefined },
        async (job, claim) => {
          signal = claim;
          jobId = job.id;
          await new Promise<void>((resolve) => claim.addEventListener("abort", () => resolve()));
          return { aborted: true };
        },
      );
      await slots.start();
      try {
        await until(() => signal !== undefined, 10_000);
        expect(signal?.aborted).toBe(false);
        // Another party takes the claim away (as expiry or a retry elsewhere would).
        await boss.cancel(PROMPT_QUEUE, jobId as string);
        await until(() => signal?.aborted === true, 10_000);
        await slots.settled();
        // The run's late result does not complete a job this worker no longer holds.
        expect(await states(url)).toEqual({ cancelled: 1 });
      } finally {
        await slots.stop();
        slots.close();
      }
    });
  }, 60_000);
});
