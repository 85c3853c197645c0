/**
 * Session storage that lives in this process only (tests, light agents, previews).
 *
 * Invariant: it keeps each entry as the JSON text a JSONL file would hold and parses
 * it again on `load`, so a session behaves the same over memory and over a file: an
 * entry that cannot be serialised fails here too, later mutation of an appended
 * object does not change what was stored, and `undefined` fields vanish on reload.
 */
import { describeError, invalidArgument, sessionError } from "../errors.js";
import type { SessionHeader, StoredEntry } from "./entries.js";
import { createSessionHeader, type LoadedSession, type SessionStorage } from "./storage.js";

export class MemoryStorage implements SessionStorage {
  readonly kind = "memory";
  readonly #header: string;
  readonly #lines: string[] = [];
  #closed = false;

  constructor(header: SessionHeader = createSessionHeader(), entries: readonly StoredEntry[] = []) {
    this.#header = JSON.stringify(header);
    for (const entry of entries) this.#lines.push(serialise(entry));
  }

  load(): LoadedSession {
    return {
      header: JSON.parse(this.#header) as SessionHeader,
      entries: this.#lines.map((line) => JSON.parse(line) as StoredEntry),
      warnings: [],
    };
  }

  append(entry: StoredEntry): void {
    if (this.#closed) throw sessionError("cannot append to a closed in-memory session");
    this.#lines.push(serialise(entry));
  }

  appendAll(entries: readonly StoredEntry[]): void {
    if (this.#closed) throw sessionError("cannot append to a closed in-memory session");
    const lines = entries.map(serialise); // all serialise, or nothing is stored
    this.#lines.push(...lines);
  }

  sync(): void {
    if (this.#closed) throw sessionError("cannot sync a closed in-memory session");
  }

  close(): void {
    this.#closed = true;
  }
}

function serialise(entry: StoredEntry): string {
  try {
    return JSON.stringify(entry);
  } catch (error) {
    throw invalidArgument(`entry ${entry.id} cannot be serialised: ${describeError(error)}`, error);
  }
}
