/**
 * Session storage in PostgreSQL (schema: ../migrations). An asynchronous
 * SessionStorage: `append`/`appendAll`/`sync`/`close` return promises that the
 * session and harness await before anything is broadcast.
 *
 * Invariants:
 * - A writable storage holds the session's advisory lock (./advisory-lock.ts) from
 *   before it reads until close; a read-only one takes no lock and never writes.
 * - Rows are numbered 1, 2, 3, ... per session in append order (`seq`); load reads
 *   them in that order, so recovery on open sees exactly what JSONL would.
 * - Writes go out in call order on one connection. Writes queued while one is in
 *   flight leave together as one INSERT statement (one transaction), so a write
 *   group (`appendAll`) is never split, and a burst costs one round trip.
 * - After a write fails, no later write is attempted (each rejects with the first
 *   failure), so storage never holds an entry whose parent was lost. A failed
 *   statement commits nothing; storage stays loadable.
 */
import {
  type LoadedSession,
  SESSION_FORMAT_VERSION,
  type SessionHeader,
  type SessionStorage,
  type StoredEntry,
} from "@rein/harness";
import {
  AdvisoryLock,
  DEFAULT_LOCK_WAIT_MS,
  type LockedConnection,
  type SessionLock,
} from "./advisory-lock.js";
import { connect, type PostgresTarget } from "./connection.js";
import { badArgument, badRow, storeError } from "./errors.js";
import type { LockConnections } from "./lock-connections.js";

/** Most writes sent in one statement; more wait for the next. */
const MAX_BATCH_ROWS = 2_000;

interface Queued {
  /** Empty for a sync marker. */
  rows: { entryId: string; type: string; body: string }[];
  resolve(): void;
  reject(error: Error): void;
}

export interface PostgresOpenOptions {
  /** Read without locking and never write (listing, export, forking an open session). */
  readOnly?: boolean;
  /** How long to wait for the session's lock before `session_in_use` (default 2000; 0: do not wait). */
  lockWaitMs?: number;
  /** How long a silent holder keeps the session's lock (default 30000; see advisory-lock.ts). */
  leaseMs?: number;
  /** Hold the lock on one of these shared connections (lock-connections.ts), not on a connection of its own. */
  locks?: LockConnections;
}

/** Takes a session's lock: on a shared lock connection when `options.locks` is given, else on a connection of its own. */
function acquireLock(
  target: PostgresTarget,
  sessionId: string,
  options: Pick<PostgresOpenOptions, "lockWaitMs" | "leaseMs" | "locks">,
): Promise<SessionLock> {
  if (options.locks) return options.locks.acquire(sessionId, options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS);
  return AdvisoryLock.acquire(target, sessionId, options.lockWaitMs, options.leaseMs);
}

export class PostgresStorage implements SessionStorage {
  readonly kind = "postgres";
  readonly sessionId: string;
  readonly readOnly: boolean;
  readonly #client: LockedConnection | undefined;
  readonly #lock: SessionLock | undefined;
  readonly #loaded: LoadedSession;
  #nextSeq: number;
  #queue: Queued[] = [];
  #draining = false;
  #failure: Error | undefined;
  #closing: Promise<void> | undefined;

  private constructor(
    sessionId: string,
    loaded: LoadedSession,
    nextSeq: number,
    client?: LockedConnection,
    lock?: SessionLock,
  ) {
    this.sessionId = sessionId;
    this.#loaded = loaded;
    this.#nextSeq = nextSeq;
    this.#client = client;
    this.#lock = lock;
    this.readOnly = client === undefined;
    lock?.onLost((error) => {
      this.#failure ??= error;
    });
  }

  /** Creates session `header.id` (fails if it exists) and holds its lock. */
  static async create(
    target: PostgresTarget,
    header: SessionHeader,
    options: Pick<PostgresOpenOptions, "leaseMs" | "locks"> = {},
  ): Promise<PostgresStorage> {
    const lock = await acquireLock(target, header.id, options);
    // The session writes through the connection that holds its lock (see advisory-lock.ts).
    const client = lock.client;
    try {
      try {
        await client.query("INSERT INTO rein_sessions (id, header, created_at) VALUES ($1, $2, $3)", [
          header.id,
          JSON.stringify(header),
          header.createdAt,
        ]);
      } catch (error) {
        if ((error as { code?: string }).code === "23505")
          throw storeError(`cannot create postgres session ${header.id}: it already exists`);
        throw storeError(`cannot create postgres session ${header.id}`, error);
      }
      return new PostgresStorage(header.id, { header, entries: [], warnings: [] }, 1, client, lock);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  /** Opens session `sessionId`: locked and writable unless `readOnly`. Reads it all now. */
  static async open(
    target: PostgresTarget,
    sessionId: string,
    options: PostgresOpenOptions = {},
  ): Promise<PostgresStorage> {
    if (options.readOnly) {
      const reader = await connect(target, `session reader ${sessionId.slice(0, 8)}`);
      try {
        const { loaded, nextSeq } = await readSession(reader, sessionId);
        return new PostgresStorage(sessionId, loaded, nextSeq);
      } finally {
        await reader.end().catch(() => {});
      }
    }
    const lock = await acquireLock(target, sessionId, options);
    try {
      const { loaded, nextSeq } = await readSession(lock.client, sessionId);
      return new PostgresStorage(sessionId, loaded, nextSeq, lock.client, lock);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  load(): LoadedSession {
    this.#assertOpen("load");
    return this.#loaded;
  }

  append(entry: StoredEntry): Promise<void> {
    return this.#enqueue([entry]);
  }

  appendAll(entries: readonly StoredEntry[]): Promise<void> | undefined {
    if (entries.length === 0) return undefined;
    return this.#enqueue(entries);
  }

  /** Every commit is already durable: this resolves when the writes before it are committed. */
  sync(): Promise<void> | undefined {
    this.#assertOpen("sync");
    if (this.readOnly) return undefined;
    return this.#enqueue([]);
  }

  /** Finishes the writes in flight, then releases the lock and the connection. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#client === undefined) return;
    await new Promise<void>((resolve) => {
      this.#queue.push({ rows: [], resolve, reject: () => resolve() });
      this.#kick();
    });
    // The lock's release ends the connection the session wrote through (a shared one: unlocks its key).
    await this.#lock?.release();
  }

  #enqueue(entries: readonly StoredEntry[]): Promise<void> {
    this.#assertOpen("append to");
    if (this.#client === undefined) throw storeError(`postgres session ${this.sessionId} is open read-only`);
    if (this.#failure) throw this.#failure;
    // Serialised now, so an entry that cannot be stored fails here with nothing written.
    const rows = entries.map((entry) => ({ entryId: entry.id, type: entry.type, body: serialise(entry) }));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ rows, resolve, reject });
      this.#kick();
    });
  }

  #kick(): void {
    if (this.#draining) return;
    this.#draining = true;
    // Next microtask: writes made in the same synchronous burst leave together.
    queueMicrotask(() => void this.#drain());
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch: Queued[] = [];
      let size = 0;
      while (this.#queue.length > 0 && (batch.length === 0 || size < MAX_BATCH_ROWS)) {
        const next = this.#queue.shift() as Queued;
        batch.push(next);
        size += next.rows.length;
      }
      try {
        if (this.#failure) throw this.#failure;
        const rows = batch.flatMap((item) => item.rows);
        if (rows.length > 0) await this.#insert(rows);
        for (const item of batch) item.resolve();
      } catch (error) {
        this.#failure ??= storeError(`cannot append to postgres session ${this.sessionId}`, error);
        for (const item of batch) item.reject(this.#failure);
      }
    }
    this.#draining = false;
  }

  async #insert(rows: Queued["rows"]): Promise<void> {
    const first = this.#nextSeq;
    const seqs = rows.map((_, index) => first + index);
    // One statement is one transaction: every row of the batch commits, or none.
    await (this.#client as LockedConnection).query(
      `WITH added AS (
         INSERT INTO rein_entries (session_id, seq, entry_id, type, body)
         SELECT $1, s, i, t, b FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[]) AS r(s, i, t, b)
         RETURNING 1
       )
       UPDATE rein_sessions SET modified_at = now() WHERE id = $1 AND EXISTS (SELECT 1 FROM added)`,
      [
        this.sessionId,
        seqs,
        rows.map((row) => row.entryId),
        rows.map((row) => row.type),
        rows.map((row) => row.body),
      ],
    );
    this.#nextSeq = first + rows.length;
  }

  #assertOpen(operation: string): void {
    if (this.#closing !== undefined)
      throw storeError(`cannot ${operation} closed postgres session ${this.sessionId}`);
  }
}

function serialise(entry: StoredEntry): string {
  try {
    return JSON.stringify(entry);
  } catch (error) {
    throw badArgument(`entry ${entry.id} cannot be serialised: ${(error as Error).message}`);
  }
}

/** Header and rows of a session, parsed; a row that is not a JSON object is an error naming it. */
export async function readSession(
  client: LockedConnection,
  sessionId: string,
): Promise<{ loaded: LoadedSession; nextSeq: number }> {
  let header: SessionHeader;
  let rows: { seq: string; body: string }[];
  try {
    const found = await client.query<{ header: string }>("SELECT header FROM rein_sessions WHERE id = $1", [
      sessionId,
    ]);
    if (found.rows[0] === undefined) throw storeError(`postgres session not found: ${sessionId}`);
    header = parseHeader(sessionId, found.rows[0].header);
    rows = (
      await client.query<{ seq: string; body: string }>(
        "SELECT seq, body FROM rein_entries WHERE session_id = $1 ORDER BY seq",
        [sessionId],
      )
    ).rows;
  } catch (error) {
    if (error instanceof Error && error.name === "HarnessError") throw error;
    throw storeError(`cannot read postgres session ${sessionId}`, error);
  }
  const entries: StoredEntry[] = [];
  let expected = 1;
  for (const row of rows) {
    if (Number(row.seq) !== expected)
      throw badRow(sessionId, row.seq, `expected seq ${expected} (a row is missing)`);
    expected++;
    let value: unknown;
    try {
      value = JSON.parse(row.body);
    } catch (error) {
      throw badRow(sessionId, row.seq, `not JSON (${(error as Error).message})`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw badRow(sessionId, row.seq, "not a JSON object");
    entries.push(value as StoredEntry);
  }
  return { loaded: { header, entries, warnings: [] }, nextSeq: expected };
}

function parseHeader(sessionId: string, text: string): SessionHeader {
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (error) {
    throw storeError(`invalid postgres session ${sessionId} header: not JSON (${(error as Error).message})`);
  }
  const h = header as Partial<SessionHeader> | null;
  if (typeof h !== "object" || h === null || h.type !== "session" || h.id !== sessionId) {
    throw storeError(
      `invalid postgres session ${sessionId} header: not a session header with id ${sessionId}`,
    );
  }
  if (h.version !== SESSION_FORMAT_VERSION)
    throw storeError(
      `invalid postgres session ${sessionId} header: unsupported session format version ${String(h.version)} (expected ${SESSION_FORMAT_VERSION})`,
    );
  if (typeof h.createdAt !== "number")
    throw storeError(`invalid postgres session ${sessionId} header: createdAt must be a number`);
  return h as SessionHeader;
}
