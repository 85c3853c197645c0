/**
 * The one-writer lock of a session: a session-level advisory lock, keyed by the
 * session id, held for as long as the session is open on the connection the session
 * writes through (`client`). The server releases it when that connection ends for any
 * reason (close, crash, SIGKILL, network loss), so there is no stale lock to guess
 * about; and since the writes share its connection, a write still running when its
 * process died has committed (or not) before the next writer can take the lock and
 * read: a lock on a connection of its own was dropped while such a write could still
 * commit behind the next writer's back. The key is 64
 * bits of SHA-256 of the id: two sessions sharing a key would only make one wait
 * for the other, never write together.
 *
 * A writer waits a little for the lock (`waitMs`, default 2 s): a holder killed a
 * moment ago still holds it until the server has noticed its connection is gone,
 * and that holder must not be mistaken for a live one. A live holder is refused
 * once the wait is over.
 *
 * The lock is a lease (`leaseMs`, default 30 s): the server ends the connection after
 * `leaseMs` without a word from its holder (`idle_session_timeout`, and
 * `idle_in_transaction_session_timeout` inside a transaction), and the holder renews
 * it by a `SELECT 1` every third of that. A holder that stops responding (SIGSTOP, a
 * frozen event loop, a host lost behind a half-open connection) thus loses its lock
 * within `leaseMs` and the next writer takes it; if it wakes up, its connection is
 * gone and it writes nothing more (`onLost`). TCP keepalives on both ends find a dead
 * peer sooner where the network allows.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { connect, type PostgresTarget } from "./connection.js";
import { sessionLocked, storeError } from "./errors.js";

export function lockKey(sessionId: string): string {
  const digest = createHash("sha256").update(`rein-session:${sessionId}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/** How long a writer waits for a session's lock before it is refused. */
export const DEFAULT_LOCK_WAIT_MS = 2_000;

/** How long a silent holder keeps its lock before the server drops it. */
export const DEFAULT_LEASE_MS = 30_000;

/** The statements of a locked session: on the connection holding its lock (one at a time when shared). */
export interface LockedConnection {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/** What a session storage holds while writable: its lock, and the connection its writes go through. */
export interface SessionLock {
  readonly sessionId: string;
  /** The connection holding the lock: the session's writes go through it. */
  readonly client: LockedConnection;
  /** Called once if the lock is lost while held (its connection died): the session must stop writing. */
  onLost(listener: (error: Error) => void): void;
  /** Lets the lock go (after the writes sent before). Idempotent. */
  release(): Promise<void>;
}

export class AdvisoryLock implements SessionLock {
  readonly sessionId: string;
  /** The connection holding the lock: the session's writes go through it. */
  readonly client: pg.Client;
  #lost: ((error: Error) => void) | undefined;
  #released = false;
  readonly #renewal: NodeJS.Timeout;

  private constructor(sessionId: string, client: pg.Client, leaseMs: number) {
    this.sessionId = sessionId;
    this.client = client;
    const lost = () => {
      clearInterval(this.#renewal);
      if (!this.#released) this.#lost?.(storeError(`postgres session ${sessionId} lost its lock connection`));
    };
    client.on("error", lost);
    client.on("end", lost);
    // Renewal: any statement resets the server's idle timer; a failed one shows as `lost`.
    this.#renewal = setInterval(
      () => client.query("SELECT 1").catch(() => undefined),
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    this.#renewal.unref();
  }

  /** Takes the lock or throws `session_in_use` naming the holder's connection. */
  static async acquire(
    target: PostgresTarget,
    sessionId: string,
    waitMs = DEFAULT_LOCK_WAIT_MS,
    leaseMs = DEFAULT_LEASE_MS,
  ): Promise<AdvisoryLock> {
    const client = await connect(target, `session lock ${sessionId.slice(0, 8)}`, { keepAlive: true });
    try {
      await leaseConnection(client, leaseMs);
      const key = lockKey(sessionId);
      if (!(await take(client, key, waitMs)))
        throw sessionLocked(sessionId, await sessionHolder(client, key));
      return new AdvisoryLock(sessionId, client, leaseMs);
    } catch (error) {
      await client.end().catch(() => {});
      throw error;
    }
  }

  /** Called once if the lock connection dies while held: the session must stop writing. */
  onLost(listener: (error: Error) => void): void {
    this.#lost = listener;
  }

  /** Ends the lock's connection (the server drops the lock with it). Idempotent. */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    clearInterval(this.#renewal);
    await this.client.end().catch(() => {});
  }
}

/**
 * Server-side end of the lease on this connection. `idle_session_timeout` needs
 * PostgreSQL 14; an older server refuses it, and there only the keepalives (a dead
 * host, not a frozen process) bound how long a silent holder keeps the lock.
 */
export async function leaseConnection(client: pg.Client, leaseMs: number): Promise<void> {
  const ms = Math.ceil(leaseMs);
  const keepaliveSeconds = Math.max(1, Math.floor(ms / 3000));
  await client.query(
    `SET idle_in_transaction_session_timeout = ${ms}; SET tcp_keepalives_idle = ${keepaliveSeconds}; ` +
      `SET tcp_keepalives_interval = ${keepaliveSeconds}; SET tcp_keepalives_count = 3`,
  );
  await client.query(`SET idle_session_timeout = ${ms}`).catch(() => undefined);
}

/** Takes the lock on `key`, waiting at most `waitMs`; false if someone else still holds it. */
async function take(client: pg.Client, key: string, waitMs: number): Promise<boolean> {
  if (waitMs <= 0) {
    const { rows } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS ok", [
      key,
    ]);
    return rows[0]?.ok === true;
  }
  await client.query(`SET lock_timeout = ${Math.ceil(waitMs)}`);
  try {
    await client.query("SELECT pg_advisory_lock($1::bigint)", [key]);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "55P03") return false; // lock_not_available: the wait is over
    throw error;
  } finally {
    await client.query("RESET lock_timeout").catch(() => {});
  }
}

/** Who holds `key`: the backend pid and the application name its process set. */
export async function sessionHolder(client: LockedConnection, key: string): Promise<string> {
  const big = BigInt(key);
  const high = Number(BigInt.asIntN(32, big >> 32n));
  const low = Number(BigInt.asIntN(32, big));
  try {
    const { rows } = await client.query<{ pid: number; app: string | null }>(
      `SELECT a.pid, a.application_name AS app
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.classid::bigint = ($1::bigint & 4294967295) AND l.objid::bigint = ($2::bigint & 4294967295)
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        LIMIT 1`,
      [high, low],
    );
    const row = rows[0];
    if (row) return `${row.app || "another client"} (backend pid ${row.pid})`;
  } catch {
    // Describing the holder is a courtesy: not being allowed to read pg_locks must not hide the refusal.
  }
  return "another client";
}
