/**
 * Sessions in one PostgreSQL database: create, list, open (locked), open
 * read-only, fork, and move sessions between JSONL files and the database.
 * The PostgreSQL counterpart of the harness's SessionStore (a directory of JSONL
 * files), with the same ids, summaries and fork content.
 *
 * Invariants: the schema is migrated before the first use; the store only writes a
 * session whose advisory lock it holds (fork and import create sessions under their
 * lock, in one write group); a session made by fork or import is whole or absent.
 */
import {
  type CreateSessionOptions,
  createSessionHeader,
  forkEntries,
  JsonlStorage,
  Session,
  type SessionHeader,
  type SessionSummary,
  type StoredEntry,
} from "@rein/harness";
import type pg from "pg";
import { DEFAULT_LEASE_MS } from "./advisory-lock.js";
import { connect, type PostgresTarget, where } from "./connection.js";
import { badArgument, storeError } from "./errors.js";
import { LockConnections } from "./lock-connections.js";
import { migrate } from "./migrations.js";
import { type PostgresOpenOptions, PostgresStorage } from "./postgres-storage.js";

export interface PostgresStoreOptions {
  /** How long a silent writer keeps a session's lock, in ms (default 30000; see advisory-lock.ts). */
  leaseMs?: number;
  /**
   * Hold the locks of the sessions this store opens for writing on at most this many
   * shared connections (lock-connections.ts) instead of one connection per session:
   * a process with many sessions open at once (`rein worker --concurrency`). Unset:
   * one connection per open session.
   */
  lockConnections?: number;
}

export class PostgresSessionStore {
  readonly target: PostgresTarget;
  readonly #lease: Pick<PostgresOpenOptions, "leaseMs" | "locks">;
  readonly #locks: LockConnections | undefined;
  #ready: Promise<void> | undefined;

  constructor(target: PostgresTarget, options: PostgresStoreOptions = {}) {
    this.target = target;
    this.#locks =
      options.lockConnections === undefined
        ? undefined
        : new LockConnections(target, options.lockConnections, options.leaseMs ?? DEFAULT_LEASE_MS);
    this.#lease = {
      ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
      ...(this.#locks ? { locks: this.#locks } : {}),
    };
  }

  /** The shared lock connections open now (0 without `lockConnections`). */
  get lockConnectionsOpen(): number {
    return this.#locks?.open ?? 0;
  }

  /** Ends the shared lock connections, if any (every lock on them is released). */
  async close(): Promise<void> {
    await this.#locks?.close();
  }

  /** Applies the shipped migrations (once per store; every method calls it first). */
  ready(): Promise<void> {
    this.#ready ??= this.#withClient(async (client) => {
      await migrate(client);
    }).catch((error) => {
      this.#ready = undefined; // a later call may try again (say, once the server is up)
      throw error;
    });
    return this.#ready;
  }

  /** Creates a new, locked session. */
  async create(options: CreateSessionOptions = {}): Promise<Session> {
    await this.ready();
    const header = createSessionHeader(options.cwd === undefined ? {} : { cwd: options.cwd });
    const session = Session.create(await PostgresStorage.create(this.target, header, this.#lease));
    if (options.name !== undefined) {
      session.append({ type: "session_info", name: options.name });
      await session.whenStored();
    }
    return session;
  }

  /** Opens (and locks) the session whose id is or starts with `idOrPrefix`. */
  async open(idOrPrefix: string, options: PostgresOpenOptions = {}): Promise<Session> {
    const id = await this.resolveId(idOrPrefix);
    const storage = await PostgresStorage.open(this.target, id, { ...this.#lease, ...options });
    return Session.open(storage);
  }

  /** Opens the most recently modified session, if there is one. */
  async openLatest(): Promise<Session | undefined> {
    await this.ready();
    const id = await this.#withClient(async (client) => {
      const { rows } = await client.query<{ id: string }>(
        "SELECT id FROM rein_sessions ORDER BY modified_at DESC, created_at DESC, id DESC LIMIT 1",
      );
      return rows[0]?.id;
    });
    return id === undefined ? undefined : this.open(id);
  }

  /** Every session, most recently modified first (counts computed in the database). */
  async list(): Promise<SessionSummary[]> {
    await this.ready();
    const rows = await this.#withClient(
      async (client) =>
        (
          await client.query<{
            id: string;
            header: string;
            modified: string;
            entries: string;
            messages: string;
            name: string | null;
            first_user: string | null;
          }>(
            `SELECT s.id, s.header, (extract(epoch FROM s.modified_at) * 1000)::float8 AS modified,
                    count(e.*) FILTER (WHERE e.type <> 'journal') AS entries,
                    count(e.*) FILTER (WHERE e.type = 'message') AS messages,
                    (SELECT body FROM rein_entries n WHERE n.session_id = s.id AND n.type = 'session_info'
                      ORDER BY n.seq DESC LIMIT 1) AS name,
                    (SELECT body FROM rein_entries u WHERE u.session_id = s.id AND u.type = 'message'
                        AND u.body ~ '"message":{"role":"user"' ORDER BY u.seq LIMIT 1) AS first_user
               FROM rein_sessions s LEFT JOIN rein_entries e ON e.session_id = s.id
              GROUP BY s.id
              ORDER BY s.modified_at DESC, s.created_at DESC`,
          )
        ).rows,
    );
    return rows.map((row) => summarise(row, this.target));
  }

  /**
   * The ids of the sessions holding a journal record of `event` (durable approvals
   * look for `tool_park`), most recently modified first: one query instead of opening
   * every session. A text match on the stored line, so a damaged row cannot fail it;
   * it may name a session whose record only mentions the event, never miss one.
   */
  async sessionsWithJournal(event: string): Promise<string[]> {
    await this.ready();
    const needle = `"event":${JSON.stringify(event)}`;
    return this.#withClient(async (client) =>
      (
        await client.query<{ id: string }>(
          `SELECT s.id FROM rein_sessions s
            WHERE EXISTS (SELECT 1 FROM rein_entries e
                           WHERE e.session_id = s.id AND e.type = 'journal' AND strpos(e.body, $1) > 0)
            ORDER BY s.modified_at DESC, s.created_at DESC`,
          [needle],
        )
      ).rows.map((row) => row.id),
    );
  }

  /**
   * A new session holding the source's branch from the root to `entryId`, the same
   * content JSONL's fork writes (harness `forkEntries`), in one transaction.
   */
  async fork(sourceId: string, entryId: string): Promise<Session> {
    const source = await this.open(sourceId, { readOnly: true });
    const content = forkEntries(source, entryId);
    const header = createSessionHeader(source.header.cwd === undefined ? {} : { cwd: source.header.cwd });
    header.forkedFrom = { sessionId: source.id, entryId };
    return this.#createWith(header, content);
  }

  /** The session as a JSONL file's text: header line, then every entry and journal record. */
  async exportJsonl(idOrPrefix: string): Promise<string> {
    const session = await this.open(idOrPrefix, { readOnly: true });
    const lines = [session.header, ...storedEntries(session)].map((value) => JSON.stringify(value));
    return `${lines.join("\n")}\n`;
  }

  /** Writes the session to a new JSONL file (`file` must not exist). */
  async exportToFile(idOrPrefix: string, file: string): Promise<string> {
    const session = await this.open(idOrPrefix, { readOnly: true });
    const storage = JsonlStorage.create(file, session.header);
    try {
      storage.appendAll(storedEntries(session));
      storage.sync();
    } finally {
      storage.close();
    }
    return session.id;
  }

  /**
   * Imports a JSONL session file as a new PostgreSQL session with the same id,
   * header and entries (checked as a session first, torn tail dropped with a warning).
   */
  async importJsonl(file: string): Promise<{ id: string; entries: number; warnings: string[] }> {
    const source = Session.open(JsonlStorage.open(file, { readOnly: true }));
    const entries = storedEntries(source);
    const session = await this.#createWith(source.header, entries);
    await session.close();
    return { id: source.id, entries: entries.length, warnings: source.warnings };
  }

  /** The full id of the session whose id is or starts with `idOrPrefix`. */
  async resolveId(idOrPrefix: string): Promise<string> {
    if (idOrPrefix === "") throw badArgument(`empty session id (in ${where(this.target)})`);
    await this.ready();
    const ids = await this.#withClient(async (client) =>
      (
        await client.query<{ id: string }>(
          "SELECT id FROM rein_sessions WHERE id = $1 OR starts_with(id, $1) ORDER BY id LIMIT 10",
          [idOrPrefix],
        )
      ).rows.map((row) => row.id),
    );
    if (ids.includes(idOrPrefix)) return idOrPrefix;
    if (ids.length === 1) return ids[0] as string;
    if (ids.length === 0) throw badArgument(`no session "${idOrPrefix}" in ${where(this.target)}`);
    throw badArgument(
      `session id "${idOrPrefix}" is ambiguous in ${where(this.target)}: it matches ${ids.join(", ")}`,
    );
  }

  /** Deletes a session (its entries go with it); refuses while someone holds it. */
  async remove(idOrPrefix: string): Promise<void> {
    const id = await this.resolveId(idOrPrefix);
    const session = await this.open(id); // takes the lock: nobody is writing it
    try {
      await this.#withClient((client) => client.query("DELETE FROM rein_sessions WHERE id = $1", [id]));
    } finally {
      await session.close();
    }
  }

  async #createWith(header: SessionHeader, entries: readonly StoredEntry[]): Promise<Session> {
    await this.ready();
    const storage = await PostgresStorage.create(this.target, header, this.#lease);
    try {
      await storage.appendAll(entries);
    } catch (error) {
      // Half a session is worse than none: the rows never committed; drop the header row too.
      await storage.close();
      await this.#withClient((client) =>
        client.query("DELETE FROM rein_sessions WHERE id = $1", [header.id]),
      );
      throw error;
    }
    return Session.open(storage);
  }

  async #withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = await connect(this.target, "session store");
    try {
      return await work(client);
    } catch (error) {
      if (error instanceof Error && error.name === "HarnessError") throw error;
      throw storeError(`postgres session store at ${where(this.target)} failed`, error);
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/** Entries and journal records in their stored (append) order. */
function storedEntries(session: Session): StoredEntry[] {
  return session.storage.load().entries;
}

function summarise(
  row: {
    id: string;
    header: string;
    modified: string | number;
    entries: string;
    messages: string;
    name: string | null;
    first_user: string | null;
  },
  target: PostgresTarget,
): SessionSummary {
  const summary: SessionSummary = {
    id: row.id,
    path: `${where(target)}#${row.id}`,
    createdAt: 0,
    modifiedAt: Number(row.modified),
    entryCount: Number(row.entries),
    messageCount: Number(row.messages),
  };
  try {
    const header = JSON.parse(row.header) as SessionHeader;
    summary.createdAt = header.createdAt;
    if (header.forkedFrom !== undefined) summary.forkedFrom = header.forkedFrom;
    if (row.name !== null) {
      const name = (JSON.parse(row.name) as { name?: unknown }).name;
      if (typeof name === "string") summary.name = name;
    }
    if (row.first_user !== null) {
      const content = (JSON.parse(row.first_user) as { message?: { content?: unknown } }).message?.content;
      summary.firstUserText =
        typeof content === "string"
          ? content
          : Array.isArray(content)
            ? content.flatMap((block) => (block?.type === "text" ? [String(block.text)] : [])).join("\n")
            : "";
    }
  } catch (error) {
    summary.error = `unreadable row: ${(error as Error).message}`;
  }
  return summary;
}
