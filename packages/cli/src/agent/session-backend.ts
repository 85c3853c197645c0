/**
 * Where the CLI keeps sessions: a directory of JSONL files (default) or PostgreSQL
 * (`session: { store: "postgres", url }`, through the optional @rein/store-postgres).
 * Every command that creates, opens, lists, forks, exports or imports a session goes
 * through this one port, so both stores behave the same from the command line.
 * Invariant: @rein/store-postgres is loaded only when the config selects it.
 */
import { accessSync, constants, existsSync, mkdirSync, rmSync } from "node:fs";
import { resolve } from "node:path";
import {
  type CreateSessionOptions,
  JsonlStorage,
  maskConnectionStrings,
  Session,
  SessionStore,
  type SessionSummary,
  type StoredEntry,
} from "@rein/harness";
import type { LoadedConfig } from "../config/load-config.js";
import { whereWritten } from "../config/value-origin.js";
import { configError } from "../errors.js";
import { usingDatabase } from "./database-errors.js";

export interface SessionBackendPort {
  readonly kind: "jsonl" | "postgres";
  /** A human description of where sessions live (a directory, or a database without its password). */
  readonly where: string;
  create(options: CreateSessionOptions): Promise<Session>;
  open(idOrPrefix: string): Promise<Session>;
  openLatest(): Promise<Session | undefined>;
  openReadOnly(idOrPrefix: string): Promise<Session>;
  list(): Promise<SessionSummary[]>;
  /** The sessions that may hold parked tool calls (every readable one, for JSONL). */
  sessionsWithParks(): Promise<string[]>;
  fork(idOrPrefix: string, entryId: string): Promise<Session>;
  /** Removes a session this process just created and left empty. */
  discard(session: Session): Promise<void>;
  /** Writes the session to a new JSONL file; returns its id. */
  exportJsonl(idOrPrefix: string, file: string): Promise<string>;
  /** Copies a JSONL session file into this store under the same id. */
  importJsonl(file: string): Promise<{ id: string; entries: number; warnings: string[] }>;
  /** Checks the store can be used for real (`rein doctor`): resolves with what it found, or throws why not. */
  probe(): Promise<string>;
  /** Ends what the store keeps open between sessions (PostgreSQL's shared lock connections). */
  close(): Promise<void>;
}

/** The JSONL directory of a config (also used by commands that only know files). */
export function sessionDir(loaded: LoadedConfig): string {
  return resolve(loaded.dir, loaded.config.session?.dir ?? ".rein/sessions");
}

/**
 * `leaseMs`: how long a silent holder keeps a PostgreSQL session's lock (the store's default if unset);
 * `syncOffThread`: JSONL sessions fsync off the event loop (see JsonlOpenOptions);
 * `lockConnections`: PostgreSQL session locks shared over at most this many connections
 * (`rein worker`; see @rein/store-postgres), else one connection per open session.
 */
export async function sessionBackend(
  loaded: LoadedConfig,
  leaseMs?: number,
  options: { syncOffThread?: boolean; lockConnections?: number } = {},
): Promise<SessionBackendPort> {
  const session = loaded.config.session;
  if (session?.store === "postgres")
    return postgresBackend(loaded, session.url as string, leaseMs, options.lockConnections);
  return jsonlBackend(
    new SessionStore(sessionDir(loaded), options.syncOffThread ? { syncOffThread: true } : {}),
  );
}

function jsonlBackend(store: SessionStore): SessionBackendPort {
  return {
    kind: "jsonl",
    where: store.dir,
    create: async (options) => store.create(options),
    open: async (id) => store.open(id),
    openLatest: async () => store.openLatest(),
    openReadOnly: async (id) => Session.open(JsonlStorage.open(store.pathOf(id), { readOnly: true })),
    list: async () => store.list(),
    sessionsWithParks: async () => store.list().flatMap((s) => (s.error ? [] : [s.id])),
    fork: async (id, entryId) => store.fork(id, entryId),
    discard: async (session) => {
      const file = session.storage.path;
      await session.close();
      if (file) rmSync(file, { force: true });
    },
    exportJsonl: async (id, file) => {
      const source = Session.open(JsonlStorage.open(store.pathOf(id), { readOnly: true }));
      copyToFile(source, file);
      return source.id;
    },
    importJsonl: async (file) => {
      const source = Session.open(JsonlStorage.open(file, { readOnly: true }));
      const target = store.fileFor(source.id, source.header.createdAt);
      if (existsSync(target)) throw configError(`session ${source.id} already exists in ${store.dir}`);
      mkdirSync(store.dir, { recursive: true });
      copyToFile(source, target);
      return { id: source.id, entries: source.storage.load().entries.length, warnings: source.warnings };
    },
    probe: async () => {
      if (!existsSync(store.dir)) mkdirSync(store.dir, { recursive: true });
      accessSync(store.dir, constants.W_OK);
      return `jsonl ${store.dir}`;
    },
    close: async () => undefined,
  };
}

function copyToFile(source: Session, file: string): void {
  const entries: StoredEntry[] = source.storage.load().entries;
  const storage = JsonlStorage.create(file, source.header);
  try {
    storage.appendAll(entries);
    storage.sync();
  } catch (error) {
    storage.close();
    rmSync(file, { force: true });
    throw error;
  } finally {
    storage.close();
  }
}

const postgresStores = new Map<string, import("@rein/store-postgres").PostgresSessionStore>();

async function postgresBackend(
  loaded: LoadedConfig,
  url: string,
  leaseMs: number | undefined,
  lockConnections: number | undefined,
): Promise<SessionBackendPort> {
  let module: typeof import("@rein/store-postgres");
  try {
    module = await import("@rein/store-postgres");
  } catch (error) {
    throw configError(
      `session.store "postgres" needs the @rein/store-postgres package: install it next to @rein/cli (not on the npm registry yet: npm install -D the rein-store-postgres tarball pnpm release:pack prints): ${(error as Error).message}`,
      whereWritten(loaded, "session.store"),
    );
  }
  // One store per database and process: its schema check runs once, not on every
  // session a worker opens.
  const key = `${leaseMs ?? ""} ${lockConnections ?? ""} ${url}`;
  let store = postgresStores.get(key);
  if (store === undefined) {
    store = new module.PostgresSessionStore(url, {
      ...(leaseMs === undefined ? {} : { leaseMs }),
      ...(lockConnections === undefined ? {} : { lockConnections }),
    });
    postgresStores.set(key, store);
  }
  const where = maskConnectionStrings(url);
  // Every call: a database that cannot be used is the one `database` error (exit 2).
  const use = <T>(work: () => Promise<T>) => usingDatabase("session store", where, work);
  const pg = store;
  return {
    kind: "postgres",
    where,
    create: (options) => use(() => pg.create(options)),
    open: (id) => use(() => pg.open(id)),
    openLatest: () => use(() => pg.openLatest()),
    openReadOnly: (id) => use(() => pg.open(id, { readOnly: true })),
    list: () => use(() => pg.list()),
    sessionsWithParks: () => use(() => pg.sessionsWithJournal("tool_park")),
    fork: (id, entryId) => use(() => pg.fork(id, entryId)),
    discard: async (session) => {
      await session.close();
      await use(() => pg.remove(session.id));
    },
    exportJsonl: (id, file) => use(() => pg.exportToFile(id, file)),
    importJsonl: (file) => {
      if (!existsSync(file)) throw configError(`no such session file: ${file}`);
      return use(() => pg.importJsonl(file));
    },
    probe: () =>
      use(async () => {
        await pg.ready();
        return `postgres ${where} (reachable, schema up to date)`;
      }),
    close: () => pg.close(),
  };
}
