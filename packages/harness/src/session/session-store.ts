/**
 * A directory of JSONL sessions: create, list, resume and fork them by id.
 *
 * Invariant: each session is one file named `<ISO creation time>_<session id>.jsonl`
 * (colons replaced by `-`, so the name is valid everywhere and sorts by time); the
 * name is the index, the header inside is the truth. The store only ever writes a
 * session it has locked, and reads other sessions (listing, fork sources) read-only,
 * so it works while other processes have them open.
 */
import fs from "node:fs";
import path from "node:path";
import { describeError, invalidArgument } from "../errors.js";
import { shortId } from "../ids.js";
import type { JournalRecord, SessionEntry, StoredEntry } from "./entries.js";
import { JsonlStorage } from "./jsonl-storage.js";
import { Session } from "./session.js";
import { createSessionHeader } from "./storage.js";
import { forkToolRecords } from "./tool-call-state.js";

export interface SessionSummary {
  id: string;
  path: string;
  /** Epoch milliseconds, from the header (the file's birth time if the file is unreadable). */
  createdAt: number;
  /** Epoch milliseconds: the file's modification time. */
  modifiedAt: number;
  /** All entries, leaf moves included. */
  entryCount: number;
  /** `message` entries, on every branch. */
  messageCount: number;
  /** The latest `session_info` name. */
  name?: string;
  /** Text of the first user message in the file. */
  firstUserText?: string;
  forkedFrom?: { sessionId: string; entryId: string };
  /** Set instead of the counts when the file cannot be loaded. */
  error?: string;
}

export interface CreateSessionOptions {
  cwd?: string;
  /** Recorded as a `session_info` entry. */
  name?: string;
}

interface SessionFile {
  id: string;
  path: string;
}

const SESSION_FILE = /^.+_([^_]+)\.jsonl$/;

/**
 * The id -> file of each session in a store directory's last listing, in this process:
 * opening a session by its exact id then costs a stat, not a directory listing (a
 * worker opens one per job, in a directory of thousands). Checked against the disk at
 * each use (a missing file lists the directory again); a session created since the
 * listing is not in it, so it lists the directory again. Bounded.
 */
const knownFiles = new Map<string, Map<string, string>>();
const MAX_KNOWN_FILES = 10_000;

/** The listing's files, replacing what was known of `dir` (the first of two files with one id, as `pathOf` picks). */
function remember(dir: string, files: readonly SessionFile[]): void {
  const known = new Map<string, string>();
  for (const file of files) {
    if (known.size >= MAX_KNOWN_FILES) break;
    if (!known.has(file.id)) known.set(file.id, file.path);
  }
  knownFiles.set(dir, known);
}

export interface SessionStoreOptions {
  /** The sessions it creates and opens fsync off the event loop (JsonlOpenOptions.syncOffThread). */
  syncOffThread?: boolean;
}

export class SessionStore {
  readonly dir: string;
  readonly #writable: { syncOffThread?: boolean };

  constructor(dir: string, options: SessionStoreOptions = {}) {
    this.dir = path.resolve(dir);
    this.#writable = options.syncOffThread ? { syncOffThread: true } : {};
  }

  /** Creates a new, locked session. */
  create(options: CreateSessionOptions = {}): Session {
    const header = createSessionHeader(options.cwd === undefined ? {} : { cwd: options.cwd });
    fs.mkdirSync(this.dir, { recursive: true });
    const session = Session.create(
      JsonlStorage.create(this.fileFor(header.id, header.createdAt), header, this.#writable),
    );
    if (options.name !== undefined) session.append({ type: "session_info", name: options.name });
    return session;
  }

  /** Every session in the directory, most recently modified first. Never throws for one bad file. */
  list(): SessionSummary[] {
    const summaries = this.#files().map(summarise);
    return summaries.sort((a, b) => b.modifiedAt - a.modifiedAt || b.createdAt - a.createdAt);
  }

  /** Opens (and locks) the session whose id is or starts with `idOrPrefix`. */
  open(idOrPrefix: string): Session {
    return Session.open(JsonlStorage.open(this.pathOf(idOrPrefix), this.#writable));
  }

  /** Opens the most recently modified session, if there is one. */
  openLatest(): Session | undefined {
    let latest: { file: SessionFile; modifiedAt: number } | undefined;
    for (const file of this.#files()) {
      let modifiedAt: number;
      try {
        modifiedAt = fs.statSync(file.path).mtimeMs;
      } catch {
        continue; // deleted meanwhile
      }
      // Ties go to the later name, which starts with the later creation time.
      if (
        latest === undefined ||
        modifiedAt > latest.modifiedAt ||
        (modifiedAt === latest.modifiedAt && file.path > latest.file.path)
      ) {
        latest = { file, modifiedAt };
      }
    }
    return latest === undefined
      ? undefined
      : Session.open(JsonlStorage.open(latest.file.path, this.#writable));
  }

  /**
   * A new session holding the source's branch from the root to `entryId`, with the
   * same entry ids, its leaf at `entryId`, and the journal records recovery on the
   * fork needs to tell the branch's open tool calls that ran from those that did not
   * (see `forkToolRecords`). Everything is one write group, so a crash leaves the fork
   * whole or empty. The source is only read.
   */
  fork(sourceId: string, entryId: string): Session {
    const source = Session.open(JsonlStorage.open(this.pathOf(sourceId), { readOnly: true }));
    let content: StoredEntry[];
    try {
      content = forkEntries(source, entryId);
    } finally {
      source.close();
    }
    const header = createSessionHeader(source.header.cwd === undefined ? {} : { cwd: source.header.cwd });
    header.forkedFrom = { sessionId: source.id, entryId };
    const file = this.fileFor(header.id, header.createdAt);
    const storage = JsonlStorage.create(file, header);
    try {
      storage.appendAll(content);
      storage.sync();
    } catch (error) {
      // A half-copied fork is worse than none.
      storage.close();
      fs.rmSync(file, { force: true });
      throw error;
    }
    return Session.open(storage);
  }

  /** The file of the session whose id is or starts with `idOrPrefix`. */
  pathOf(idOrPrefix: string): string {
    if (idOrPrefix === "") throw invalidArgument(`empty session id (in ${this.dir})`);
    // A file's name never changes, so a path found once is still the session's while it exists.
    const known = knownFiles.get(this.dir)?.get(idOrPrefix);
    if (known !== undefined && fs.existsSync(known)) return known;
    const files = this.#files();
    remember(this.dir, files);
    const exact = files.find((file) => file.id === idOrPrefix);
    if (exact !== undefined) return exact.path;
    const matches = files.filter((file) => file.id.startsWith(idOrPrefix));
    if (matches.length === 1) return (matches[0] as SessionFile).path;
    if (matches.length === 0) throw invalidArgument(`no session "${idOrPrefix}" in ${this.dir}`);
    const ids = matches.map((file) => file.id).join(", ");
    throw invalidArgument(`session id "${idOrPrefix}" is ambiguous in ${this.dir}: it matches ${ids}`);
  }

  /** The file a session with this id and creation time has in this store (existing or not). */
  fileFor(id: string, createdAt: number): string {
    return path.join(this.dir, `${new Date(createdAt).toISOString().replace(/:/g, "-")}_${id}.jsonl`);
  }

  #files(): SessionFile[] {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") return [];
      throw invalidArgument(`cannot read session directory ${this.dir}: ${describeError(error)}`, error);
    }
    const files: SessionFile[] = [];
    for (const name of names) {
      const match = SESSION_FILE.exec(name);
      if (match !== null) files.push({ id: match[1] as string, path: path.join(this.dir, name) });
    }
    return files;
  }
}

/**
 * What a fork of `source` at `entryId` holds, whatever the storage: the branch from
 * the root to `entryId` with the same entry ids, then the journal records recovery on
 * the fork needs to tell the branch's open tool calls that ran from those that did not
 * (see `forkToolRecords`), with fresh ids. Written as one write group.
 */
export function forkEntries(source: Session, entryId: string): StoredEntry[] {
  const entry = source.getEntry(entryId);
  if (entry === undefined || entry.type === "leaf") {
    throw invalidArgument(`cannot fork session ${source.id} at "${entryId}": no such tree entry`);
  }
  const branch: SessionEntry[] = source.branch(entryId);
  const records: JournalRecord[] = forkToolRecords(branch, source.journal(), source.entries());
  const taken = new Set(branch.map((e) => e.id));
  const journal = records.map((record): StoredEntry => {
    let id = shortId();
    while (taken.has(id)) id = shortId();
    taken.add(id);
    return { ...record, type: "journal", id, parentId: entryId, timestamp: Date.now() };
  });
  return [...branch, ...journal];
}

function summarise(file: SessionFile): SessionSummary {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(file.path);
    const loaded = JsonlStorage.open(file.path, { readOnly: true }).load();
    const summary: SessionSummary = {
      id: loaded.header.id,
      path: file.path,
      createdAt: loaded.header.createdAt,
      modifiedAt: stat.mtimeMs,
      entryCount: loaded.entries.filter((entry) => entry.type !== "journal").length,
      messageCount: 0,
    };
    if (loaded.header.forkedFrom !== undefined) summary.forkedFrom = loaded.header.forkedFrom;
    for (const entry of loaded.entries) {
      if (entry.type === "session_info" && typeof entry.name === "string") summary.name = entry.name;
      if (entry.type !== "message") continue;
      summary.messageCount++;
      if (summary.firstUserText === undefined && entry.message.role === "user") {
        const { content } = entry.message;
        summary.firstUserText =
          typeof content === "string"
            ? content
            : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
      }
    }
    return summary;
  } catch (error) {
    return {
      id: file.id,
      path: file.path,
      createdAt: stat?.birthtimeMs ?? 0,
      modifiedAt: stat?.mtimeMs ?? 0,
      entryCount: 0,
      messageCount: 0,
      error: describeError(error),
    };
  }
}
