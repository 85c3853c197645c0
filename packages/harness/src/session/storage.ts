/**
 * Where a session's header and entries live.
 *
 * Invariant: a synchronous storage (memory, JSONL) hands an entry to the OS before
 * `append` returns, so the harness persists a message and then broadcasts it with no
 * `await` in between. An asynchronous storage (a database) returns a promise from
 * `append`, `appendAll`, `sync` and `close`; the session tracks it and the harness
 * awaits it before broadcasting, so either way nothing can observe a message that is
 * not yet written. A failed write leaves storage exactly as loadable as before it.
 */
import { randomUUID } from "node:crypto";
import { SESSION_FORMAT_VERSION, type SessionHeader, type StoredEntry } from "./entries.js";

export interface LoadedSession {
  header: SessionHeader;
  /** Every entry and journal record, in append order. */
  entries: StoredEntry[];
  /** Problems that were tolerated (for example a torn last line that was dropped). */
  warnings: string[];
  /**
   * Set by storages that already ran the entry checks of ./validation.ts over
   * `entries`, in order, so `Session.open` need not repeat them.
   */
  validated?: boolean;
  /**
   * With `validated`: every entry of `entries` by id, the index those checks built.
   * `Session.open` takes it over (and adds to it) instead of building its own.
   */
  byId?: Map<string, StoredEntry>;
}

/**
 * What `append`, `appendAll`, `sync` and `close` return: nothing (the work is done)
 * or a promise. An asynchronous storage must apply writes in call order and settle
 * their promises in that order; after a write fails it applies no later write (each
 * rejects), so storage never holds an entry whose parent write was lost.
 */
export type StorageResult = void | Promise<void>;

export interface SessionStorage {
  /** `memory`, `jsonl`, or another storage's name (e.g. `postgres`). */
  readonly kind: "memory" | "jsonl" | (string & {});
  /** The session file (JSONL storage only). */
  readonly path?: string;
  /**
   * Reads everything. Writable JSONL storage also repairs a torn tail here; an
   * asynchronous storage reads when it is opened, so this stays synchronous.
   */
  load(): LoadedSession;
  /**
   * Persists one entry or journal record as one whole line. Throws a HarnessError
   * with code `session` on failure (or rejects with it), leaving storage loadable.
   */
  append(entry: StoredEntry): StorageResult;
  /**
   * Persists several entries as one unit (a write group): after a crash, a load sees
   * all of them or none. Same failure contract as `append`.
   */
  appendAll(entries: readonly StoredEntry[]): StorageResult;
  /**
   * Durability point: everything appended so far is flushed to stable storage.
   * With `wait: false` the flush may complete in the background (group commit);
   * a failure then surfaces on the next append or sync. Every append is already
   * in the OS when `append` returns, so a killed process loses nothing either way.
   */
  sync(options?: { wait?: boolean }): StorageResult;
  /** Releases the storage (and its lock) after its writes in flight. Idempotent. */
  close(): StorageResult;
}

/** A fresh header with a random id. */
export function createSessionHeader(options: { cwd?: string; createdAt?: number } = {}): SessionHeader {
  const header: SessionHeader = {
    type: "session",
    version: SESSION_FORMAT_VERSION,
    id: randomUUID(),
    createdAt: options.createdAt ?? Date.now(),
  };
  if (options.cwd !== undefined) header.cwd = options.cwd;
  return header;
}
