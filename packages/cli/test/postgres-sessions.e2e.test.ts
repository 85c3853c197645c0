/**
 * `session: { store: "postgres", url }` through the built binary: runs write their
 * sessions to PostgreSQL, `rein sessions ...` read them there, a session held by
 * another writer is refused, and `sessions export --format jsonl` / `sessions
 * import` move sessions between JSONL and PostgreSQL without changing a byte.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PostgresSessionStore } from "@rein/store-postgres";
import { createDatabase, dropDatabase, startPostgres, type TestPostgres } from "@rein/test-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

let server: TestPostgres;
let url: string;
let second: string;

beforeAll(async () => {
  server = await startPostgres();
  url = await createDatabase(server.url, "rein_cli");
  second = await createDatabase(server.url, "rein_cli");
}, 60_000);
afterAll(async () => {
  cleanup();
  for (const db of [url, second]) if (db) await dropDatabase(db).catch(() => {});
  await server?.stop();
});

const config = (script: string[], session: string) => `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  model: { script: ${JSON.stringify(script)} },
  session: ${session},
});
`;
const pgConfig = (script: string[], db: string) =>
  config(script, `{ store: "postgres", url: ${JSON.stringify(db)} }`);

describe("sessions in PostgreSQL from the CLI", { timeout: 120_000 }, () => {
  it("run, list, show and resume a session stored in PostgreSQL", async () => {
    const dir = project({ "rein.config.ts": pgConfig(["hi there", "again here"], url) });
    const first = await rein(["run", "hello"], dir);
    expect(first.code, first.stderr).toBe(0);
    // The run's summary line names the session (after its usage totals).
    expect(first.stderr).toMatch(/ · [0-9a-f]{8} · resume with rein run --continue\n/);
    const listed = await rein(["sessions", "list", "--json"], dir);
    expect(listed.code).toBe(0);
    const summaries = listed.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(summaries).toHaveLength(1);
    expect(summaries[0]).toMatchObject({ messageCount: 2, firstUserText: "hello" });
    const id = summaries[0].id as string;

    const resumed = await rein(["run", "--session", id.slice(0, 8), "more"], dir);
    expect(resumed.code).toBe(0);
    const shown = await rein(["sessions", "show", id.slice(0, 8)], dir);
    expect(shown.code).toBe(0);
    for (const text of ["hello", "hi there", "more", "again here"]) expect(shown.stdout).toContain(text);
    // Nothing was written to a JSONL directory.
    expect(() => readFileSync(join(dir, ".rein/sessions"))).toThrow();
  });

  it("a session another process holds is refused with a one-line session error", async () => {
    const dir = project({ "rein.config.ts": pgConfig(["ok"], url) });
    const store = new PostgresSessionStore(url);
    const held = await store.create();
    try {
      const refused = await rein(["run", "--session", held.id, "hello"], dir);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain("in use");
      expect(refused.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await held.close();
    }
  });

  it("export --format jsonl and import move a session between PostgreSQL and JSONL unchanged", async () => {
    const pgDir = project({ "rein.config.ts": pgConfig(["one", "two"], url) });
    expect((await rein(["run", "first"], pgDir)).code).toBe(0);
    const id = JSON.parse((await rein(["sessions", "list", "--json"], pgDir)).stdout.split("\n")[0] as string)
      .id as string;
    // JSONL out of PostgreSQL ...
    const exported = await rein(["sessions", "export", id, "--format", "jsonl", "-o", "out.jsonl"], pgDir);
    expect(exported.code).toBe(0);
    const text = readFileSync(join(pgDir, "out.jsonl"), "utf8");
    expect(JSON.parse(text.split("\n")[0] as string)).toMatchObject({ type: "session", id });
    // ... into a JSONL directory, where rein reads it ...
    const jsonlDir = project({ "rein.config.ts": config(["x"], "{}") });
    const imported = await rein(["sessions", "import", join(pgDir, "out.jsonl")], jsonlDir);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout.trim()).toBe(id);
    const fromJsonl = await rein(["sessions", "show", id, "--json"], jsonlDir);
    const fromPg = await rein(["sessions", "show", id, "--json"], pgDir);
    expect(fromJsonl.stdout).toBe(fromPg.stdout);
    // ... and back into another database, byte for byte.
    const again = await rein(["sessions", "export", id, "--format", "jsonl"], jsonlDir);
    expect(again.stdout).toBe(text);
    const otherDir = project({ "rein.config.ts": pgConfig(["x"], second) });
    expect((await rein(["sessions", "import", join(pgDir, "out.jsonl")], otherDir)).code).toBe(0);
    expect((await rein(["sessions", "export", id, "--format", "jsonl"], otherDir)).stdout).toBe(text);
    // Importing the same session twice is refused, not duplicated.
    const twice = await rein(["sessions", "import", join(pgDir, "out.jsonl")], otherDir);
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toContain("already exists");
  });

  it("a bad session store config names the option and never echoes a password", async () => {
    const cases: [string, string][] = [
      ['{ store: "postgres" }', "session.url"],
      ['{ store: "mysql", url: "mysql://u:secret@h/db" }', "session.store"],
      ['{ url: "postgres://u:secret@h/db" }', "session.url"],
      ['{ store: "postgres", url: "http://u:secret@h/db" }', "session.url"],
      ['{ stor: "postgres" }', "session.stor"],
    ];
    for (const [session, option] of cases) {
      const dir = project({ "rein.config.ts": config(["x"], session) });
      const result = await rein(["sessions", "list"], dir);
      expect(result.code, session).toBe(2);
      expect(result.stderr, session).toContain(option);
      expect(result.stderr, session).not.toContain("secret");
    }
  });
});
