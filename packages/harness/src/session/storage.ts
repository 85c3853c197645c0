/**
 * Where a session's header and entries live.
 *
 * Invariant: every method is synchronous, and an entry is handed to the OS before
 * `append` returns, so the harness can persist a message and then broadcast it with
 * no `await` in between (nothing can observe a message that is not yet written). A
 * failed `append` leaves storage exactly as loadable as before the call.
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
}

export interface SessionStorage {
  readonly kind: "memory" | "jsonl";
  /** The session file (JSONL storage only). */
  readonly path?: string;
  /** Reads everything. Writable JSONL storage also repairs a torn tail here. */
  load(): LoadedSession;
  /**
   * Persists one entry or journal record as one whole line. Throws a HarnessError
   * with code `session` on failure, leaving storage loadable.
   */
  append(entry: StoredEntry): void;
  /**
   * Persists several entries as one unit (a write group): after a crash, a load sees
   * all of them or none. Same failure contract as `append`.
   */
  appendAll(entries: readonly StoredEntry[]): void;
  /**
   * Durability point: everything appended so far is flushed to stable storage.
   * With `wait: false` the flush may complete in the background (group commit);
   * a failure then surfaces on the next append or sync. Every append is already
   * in the OS when `append` returns, so a killed process loses nothing either way.
   */
  sync(options?: { wait?: boolean }): void;
  /** Releases the storage (and its lock). Idempotent. */
  close(): void;
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
