/**
 * Workers that start together each create the table of large notices
 * (src/worker/notices.ts, `installNotices`): whichever loses the race on the
 * catalog (the table's name, its row type or the catalog's unique index) carries
 * on, so no worker dies at start because another one started beside it.
 */
import { createDatabase, dropDatabase } from "@rein/test-postgres";
import pg from "pg";
import { expect, it } from "vitest";
import { installNotices } from "../src/worker/notices.js";
import { postgresForFile } from "./support/queue-database.js";

const postgres = postgresForFile();

it("twelve workers creating the notice table at once all succeed, and the table is there once", async () => {
  const url = await createDatabase(postgres().url, "rein_notices");
  const clients = Array.from({ length: 12 }, () => new pg.Client({ connectionString: url }));
  try {
    await Promise.all(clients.map((client) => client.connect()));
    for (let round = 0; round < 20; round++) {
      await clients[0]?.query("DROP SCHEMA IF EXISTS rein_queue CASCADE; CREATE SCHEMA rein_queue");
      const results = await Promise.allSettled(clients.map((client) => installNotices(client)));
      expect(results.filter((result) => result.status === "rejected")).toEqual([]);
      const tables = await clients[0]?.query(
        "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'rein_queue' AND tablename = 'notice'",
      );
      expect(tables?.rows[0]?.n).toBe(1);
    }
  } finally {
    await Promise.all(clients.map((client) => client.end()));
    await dropDatabase(url);
  }
}, 120_000);
