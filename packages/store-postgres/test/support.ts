/** A database of its own per test file, on the shared test server (@rein/test-postgres). */
import { createDatabase, dropDatabase, startPostgres, type TestPostgres } from "@rein/test-postgres";
import pg from "pg";

export interface TestDatabase {
  url: string;
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  done(): Promise<void>;
}

export async function testDatabase(): Promise<TestDatabase> {
  const server: TestPostgres = await startPostgres();
  const url = await createDatabase(server.url, "rein_store");
  return {
    url,
    async query(sql, params) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows;
      } finally {
        await client.end();
      }
    },
    async done() {
      await dropDatabase(url).catch(() => {});
      await server.stop();
    },
  };
}
