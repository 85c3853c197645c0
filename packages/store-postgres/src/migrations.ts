/**
 * Schema migrations shipped with the package (../migrations/NNN_name.sql), applied
 * in order, each in its own transaction with its version recorded in the same
 * transaction; a transaction-scoped advisory lock makes concurrent openers take
 * turns, so each migration runs exactly once. A database at a newer version than
 * this package knows is refused rather than written with an old idea of the schema.
 */
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { storeError } from "./errors.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("../migrations/", import.meta.url));
/** Key of the advisory lock migrators take turns on ("rein" + 1). */
const MIGRATION_LOCK = 0x7265696e01;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function shippedMigrations(): Migration[] {
  return readdirSync(MIGRATIONS_DIR)
    .flatMap((file) => {
      const match = /^(\d+)_(.+)\.sql$/.exec(file);
      if (!match) return [];
      const sql = readFileSync(`${MIGRATIONS_DIR}${file}`, "utf8");
      return [{ version: Number(match[1]), name: match[2] as string, sql }];
    })
    .sort((a, b) => a.version - b.version);
}

/** Brings the database up to date; returns the versions applied now. */
export async function migrate(client: pg.Client): Promise<number[]> {
  const migrations = shippedMigrations();
  const applied: number[] = [];
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS rein_migrations (
         version integer PRIMARY KEY,
         name text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const { rows } = await client.query<{ version: number }>("SELECT version FROM rein_migrations");
    const done = new Set(rows.map((row) => row.version));
    const newest = Math.max(0, ...done);
    const known = migrations.at(-1)?.version ?? 0;
    if (newest > known) {
      throw storeError(
        `the database's rein schema is at version ${newest}, newer than this @rein/store-postgres knows (${known}): upgrade the package`,
      );
    }
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      try {
        await client.query(migration.sql);
      } catch (error) {
        throw storeError(`migration ${migration.version}_${migration.name} failed`, error);
      }
      await client.query("INSERT INTO rein_migrations (version, name) VALUES ($1, $2)", [
        migration.version,
        migration.name,
      ]);
      applied.push(migration.version);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}
