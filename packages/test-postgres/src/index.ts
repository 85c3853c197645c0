/**
 * Postgres for Rein's tests. `startPostgres()` gives the server named by env
 * `REIN_PG_URL` when set (scripts/check.sh starts one cluster for the whole run and
 * exports it; stop is then a no-op) and otherwise starts a throwaway cluster of its
 * own, stopped by `stop()` or, at the latest, when the process exits. Tests share a
 * server, so each one works in a database of its own: `createDatabase(url)`.
 */
import { randomBytes } from "node:crypto";
import { psql, type RunningCluster, startCluster, stopCluster } from "./cluster.js";

export type { RunningCluster } from "./cluster.js";
export { postgresBinDir, psql, restartCluster, startCluster, stopCluster } from "./cluster.js";
export { TestPostgresError, TestPostgresErrorCode } from "./errors.js";

export interface TestPostgres {
  /** A superuser connection URL (trust auth on 127.0.0.1). */
  readonly url: string;
  /** Stop and remove the cluster if this call started it; idempotent. */
  stop(): Promise<void>;
}

const started = new Set<string>();
let exitHookInstalled = false;

function stopAllOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const dir of started) stopCluster(dir);
  });
}

export async function startPostgres(env: NodeJS.ProcessEnv = process.env): Promise<TestPostgres> {
  const shared = env.REIN_PG_URL;
  if (shared) return { url: shared, stop: async () => {} };
  const cluster: RunningCluster = await startCluster();
  started.add(cluster.dir);
  stopAllOnExit();
  return {
    url: cluster.url,
    stop: async () => {
      if (!started.delete(cluster.dir)) return;
      stopCluster(cluster.dir);
    },
  };
}

/**
 * Create a fresh, uniquely named database on the server at `url` and return its URL.
 * `prefix` (letters, digits, `_`) makes leftovers recognisable.
 */
export async function createDatabase(url: string, prefix = "rein_test"): Promise<string> {
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(prefix)) throw new TypeError(`createDatabase: bad prefix ${prefix}`);
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await psql(url, `CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.toString();
}

/** Drop a database made by createDatabase, disconnecting whoever is still in it. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const target = new URL(databaseUrl);
  const name = target.pathname.slice(1);
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new TypeError(`dropDatabase: bad database name ${name}`);
  target.pathname = "/postgres";
  await psql(target.toString(), `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
