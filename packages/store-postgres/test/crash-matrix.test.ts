/**
 * The harness's crash matrix (packages/harness/test/reliability/crash-matrix-suite.ts)
 * on PostgreSQL storage: the child writes to a database and is SIGKILLed before,
 * during (a statement in flight) or after a write, or inside a listener; the parent
 * reopens the session from the database and checks every promise JSONL keeps.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
// The harness's sources, as the suite's parent side uses them (the child runs the built packages).
import { Session } from "../../harness/src/session/session.js";
import { crashMatrix } from "../../harness/test/reliability/crash-matrix-suite.js";
import { PostgresSessionStore, PostgresStorage } from "../src/index.js";
import { type TestDatabase, testDatabase } from "./support.js";

const built = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../dist/index.js");
let db: TestDatabase | undefined;

const matrix = crashMatrix({
  name: "PostgreSQL",
  defaultSeeds: 100,
  async start() {
    db = await testDatabase();
    await new PostgresSessionStore(db.url).ready();
  },
  async stop() {
    await db?.done();
  },
  place: () => (db as TestDatabase).url,
  job: (sessionId) => ({ store: built, ...(sessionId === undefined ? {} : { sessionId }) }),
  async headerId(_url, sessionId) {
    const rows = await (db as TestDatabase).query<{ header: string }>(
      "SELECT header FROM rein_sessions WHERE id = $1",
      [sessionId],
    );
    const header = rows[0] === undefined ? undefined : JSON.parse(rows[0].header);
    return header?.type === "session" ? header.id : undefined;
  },
  open: async (url, sessionId, options) => Session.open(await PostgresStorage.open(url, sessionId, options)),
});

describe("crash matrix (PostgreSQL)", () => {
  it(`a PostgreSQL session killed with SIGKILL at ${matrix.count} seeded points reopens consistent, loses nothing and continues`, async () => {
    const { detail, summary } = await matrix.run();
    expect(detail).toEqual([]);
    expect(summary.kills).toBeGreaterThan(matrix.count / 2);
  }, 600_000);
});
