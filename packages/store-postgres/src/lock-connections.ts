/**
 * Session locks multiplexed over a few connections (`PostgresStoreOptions.lockConnections`):
 * a process holding many sessions at once (a worker with hundreds of runs in flight)
 * needs one connection per `lockConnections`, not one per session. Session-level
 * advisory locks on different keys are independent on one connection, and each
 * session's writes still go through the connection that holds its lock, so every
 * guarantee of advisory-lock.ts holds per session:
 *
 * - One writer per session: the server refuses the key to every other connection;
 *   within this process (where a second `pg_try_advisory_lock` on the same connection
 *   would succeed: the lock is re-entrant) a key held here is refused here, before
 *   asking the server. Waiting for a lock polls `pg_try_advisory_lock` (every
 *   `POLL_MS`), never a blocking `pg_advisory_lock`, which would stall every other
 *   session's writes on the connection.
 * - Fencing: when a lock connection dies (error, end, a backend terminated by the
 *   server), every session locked on it is lost at once (`onLost`: it writes nothing
 *   more; a run on it fails and its request goes back to the queue); the next
 *   acquire opens a new connection.
 * - The frozen-holder bound is the same lease as a dedicated lock connection's: the
 *   connection renews `idle_session_timeout` every third of `leaseMs`; a process that
 *   stops responding loses every lock it holds on it within `leaseMs`, TCP keepalives
 *   find a dead peer sooner.
 * - Release: `pg_advisory_unlock` on the holding connection after the session's last
 *   write (queries on one connection run in order), the connection stays for others.
 */
import type pg from "pg";
import {
  type LockedConnection,
  leaseConnection,
  lockKey,
  type SessionLock,
  sessionHolder,
} from "./advisory-lock.js";
import { connect, type PostgresTarget } from "./connection.js";
import { sessionLocked, storeError } from "./errors.js";

/** How often a waiting acquire tries the lock again. */
const POLL_MS = 50;

interface Connection {
  client: pg.Client;
  /** The connection's statements, one at a time in call order (pg queues them too, but warns). */
  serial: LockedConnection;
  ready: Promise<void>;
  /** The locks held on it, by key. */
  held: Map<string, SharedLock>;
  dead: boolean;
  renewal: NodeJS.Timeout;
}

export class LockConnections {
  readonly #target: PostgresTarget;
  readonly #count: number;
  readonly #leaseMs: number;
  readonly #connections: (Connection | undefined)[];
  /** Keys held by this process (on any of its connections), so a second opener here is refused. */
  readonly #held = new Map<string, SharedLock>();
  /** Keys an acquire here is asking the server for right now. */
  readonly #asking = new Set<string>();
  #next = 0;

  constructor(target: PostgresTarget, count: number, leaseMs: number) {
    if (!Number.isInteger(count) || count < 1)
      throw new RangeError(`lockConnections must be a whole number >= 1, got ${count}`);
    this.#target = target;
    this.#count = count;
    this.#leaseMs = leaseMs;
    this.#connections = new Array(count).fill(undefined);
  }

  /** Connections open now (at most `lockConnections`). */
  get open(): number {
    return this.#connections.filter((c) => c !== undefined && !c.dead).length;
  }

  /** Takes `sessionId`'s lock on one of the connections, waiting at most `waitMs`; else `session_in_use`. */
  async acquire(sessionId: string, waitMs: number): Promise<SessionLock> {
    const key = lockKey(sessionId);
    const deadline = Date.now() + Math.max(0, waitMs);
    for (;;) {
      if (!this.#held.has(key) && !this.#asking.has(key)) {
        this.#asking.add(key);
        try {
          const connection = await this.#connection();
          const { rows } = await connection.serial
            .query<{ ok: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS ok", [key])
            .catch((error: unknown) => {
              throw storeError(`cannot lock postgres session ${sessionId}`, error);
            });
          if (rows[0]?.ok === true && !connection.dead) {
            const lock = new SharedLock(sessionId, key, connection, () => this.#released(lock, connection));
            connection.held.set(key, lock);
            this.#held.set(key, lock);
            return lock;
          }
        } finally {
          this.#asking.delete(key);
        }
      }
      if (Date.now() >= deadline) {
        if (this.#held.has(key) || this.#asking.has(key))
          throw sessionLocked(sessionId, `another run in this process (pid ${process.pid})`);
        const connection = await this.#connection();
        throw sessionLocked(sessionId, await sessionHolder(connection.serial, key));
      }
      await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, deadline - Date.now() + 1)));
    }
  }

  /** Ends every lock connection (every lock on them is released by the server). */
  async close(): Promise<void> {
    const open = this.#connections.filter((c): c is Connection => c !== undefined);
    this.#connections.fill(undefined);
    await Promise.all(
      open.map(async (connection) => {
        await connection.ready.catch(() => {});
        connection.dead = true;
        clearInterval(connection.renewal);
        await connection.client?.end().catch(() => {});
      }),
    );
  }

  #released(lock: SharedLock, connection: Connection): void {
    if (this.#held.get(lock.key) === lock) this.#held.delete(lock.key);
    if (connection.held.get(lock.key) === lock) connection.held.delete(lock.key);
  }

  /** The connection with the fewest locks (round robin among equals), opened when missing. */
  async #connection(): Promise<Connection> {
    let best = -1;
    for (let i = 0; i < this.#count; i++) {
      const index = (this.#next + i) % this.#count;
      const candidate = this.#connections[index];
      if (candidate === undefined || candidate.dead) {
        best = index;
        break;
      }
      const current = best < 0 ? undefined : this.#connections[best];
      if (current === undefined || candidate.held.size < current.held.size) best = index;
    }
    this.#next = (best + 1) % this.#count;
    let connection = this.#connections[best];
    if (connection === undefined || connection.dead) {
      connection = this.#open();
      this.#connections[best] = connection;
    }
    try {
      await connection.ready;
    } catch (error) {
      if (this.#connections[best] === connection) this.#connections[best] = undefined;
      throw error;
    }
    return connection;
  }

  #open(): Connection {
    const leaseMs = this.#leaseMs;
    let tail: Promise<unknown> = Promise.resolve();
    const connection: Connection = {
      client: undefined as unknown as pg.Client,
      serial: {
        query: <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
          const result = tail.then(() => connection.client.query<R>(text, values));
          tail = result.catch(() => undefined);
          return result;
        },
      },
      ready: Promise.resolve(),
      held: new Map(),
      dead: false,
      renewal: undefined as unknown as NodeJS.Timeout,
    };
    connection.ready = (async () => {
      const client = await connect(this.#target, "session locks", { keepAlive: true });
      connection.client = client;
      const lost = () => {
        if (connection.dead) return;
        connection.dead = true;
        clearInterval(connection.renewal);
        const locks = [...connection.held.values()];
        connection.held.clear();
        for (const lock of locks) {
          if (this.#held.get(lock.key) === lock) this.#held.delete(lock.key);
          lock.lose(storeError(`postgres session ${lock.sessionId} lost its lock connection`));
        }
        void client.end().catch(() => {});
      };
      client.on("error", lost);
      client.on("end", lost);
      try {
        await leaseConnection(client, leaseMs);
      } catch (error) {
        lost();
        throw storeError("cannot set up a postgres session lock connection", error);
      }
      // Renewal: any statement resets the server's idle timer; a failed one shows as `lost`.
      connection.renewal = setInterval(
        () => connection.serial.query("SELECT 1").catch(() => undefined),
        Math.max(100, Math.floor(leaseMs / 3)),
      );
      connection.renewal.unref();
    })();
    return connection;
  }
}

/** One session's lock on a shared connection. */
class SharedLock implements SessionLock {
  readonly sessionId: string;
  readonly key: string;
  readonly client: LockedConnection;
  readonly #connection: Connection;
  readonly #forget: () => void;
  #lost: ((error: Error) => void) | undefined;
  #lostError: Error | undefined;
  #released = false;

  constructor(sessionId: string, key: string, connection: Connection, forget: () => void) {
    this.sessionId = sessionId;
    this.key = key;
    this.client = connection.serial;
    this.#connection = connection;
    this.#forget = forget;
  }

  onLost(listener: (error: Error) => void): void {
    this.#lost = listener;
    if (this.#lostError && !this.#released) listener(this.#lostError);
  }

  lose(error: Error): void {
    if (this.#released || this.#lostError) return;
    this.#lostError = error;
    this.#lost?.(error);
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    if (!this.#connection.dead && this.#lostError === undefined)
      await this.client.query("SELECT pg_advisory_unlock($1::bigint)", [this.key]).catch(() => {});
    // Only now may another opener here take the key (the server has let it go).
    this.#forget();
  }
}
