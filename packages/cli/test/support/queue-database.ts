/**
 * A test file's own PostgreSQL (started before its tests, stopped after) and a fresh
 * database with Rein's prompt queue on it for each test, dropped afterwards.
 */
import { createDatabase, dropDatabase, startPostgres, type TestPostgres } from "@rein/test-postgres";
import type { PgBoss } from "pg-boss";
import { afterAll, beforeAll } from "vitest";
import { closeQueue, openQueue } from "../../src/worker/prompt-queue.js";

/** Registers the file's server; the returned function gives it once started. */
export function postgresForFile(): () => TestPostgres {
  let postgres: TestPostgres | undefined;
  beforeAll(async () => {
    postgres = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await postgres?.stop();
  });
  return () => {
    if (postgres === undefined) throw new Error("the test file's PostgreSQL has not started");
    return postgres;
  };
}

/** Runs `test` on a new database (named from `prefix`) with the queue open on it. */
export async function withQueue(
  server: TestPostgres,
  prefix: string,
  test: (boss: PgBoss, url: string) => Promise<void>,
): Promise<void> {
  const url = await createDatabase(server.url, prefix);
  const boss = await openQueue(url, { connections: 4 });
  try {
    await test(boss, url);
  } finally {
    await closeQueue(boss);
    await dropDatabase(url);
  }
}
