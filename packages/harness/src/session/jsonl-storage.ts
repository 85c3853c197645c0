/**
 * Session storage in a JSONL file (format and torn-tail rule: ./jsonl-format.ts).
 *
 * Invariant: the file always consists of whole lines and whole write groups, except
 * possibly a torn tail left by a crash mid-write. A writable storage holds the session lock before it
 * reads, cuts a torn tail off before its first append (so a new entry never shares a
 * line with a torn one), and cuts a failed append back to the last good size. It
 * never recreates a file deleted under it. A read-only storage never writes at all.
 */
import fs from "node:fs";
import path from "node:path";
import { describeError, HarnessError, invalidArgument, sessionError } from "../errors.js";
import type { SessionHeader, StoredEntry } from "./entries.js";
import { encodeEntries, type ParsedFile, parseSessionFile } from "./jsonl-format.js";
import { SessionLock } from "./lock.js";
import type { LoadedSession, SessionStorage } from "./storage.js";
import { headerProblem } from "./validation.js";

export interface JsonlOpenOptions {
  /** Read without locking and never write (listing, forking a session someone else has open). */
  readOnly?: boolean;
  /**
   * Durability points without blocking the event loop: `sync()` and `close()` return a
   * promise and fsync on libuv's thread pool (the session tracks it: `whenStored()`
   * resolves once the data is on disk), overlapping syncs of this file coalesce, and
   * `close()` releases the lock only after the last fsync. For a process running many
   * sessions at once (`rein worker`), where one session's fsync would stall all others.
   */
  syncOffThread?: boolean;
}

export class JsonlStorage implements SessionStorage {
  readonly kind = "jsonl";
  readonly path: string;
  readonly readOnly: boolean;
  readonly #lock: SessionLock | undefined;
  /** Append-mode descriptor; `undefined` when read-only or closed. */
  #fd: number | undefined;
  /** Bytes of whole, valid lines: where the next append starts. `undefined` until loaded. */
  #goodSize: number | undefined;
  /** A rollback failed: the tail past `#goodSize` must be cut before anything else is written. */
  #tailDirty = false;
  #syncing = false;
  #syncAgain = false;
  #syncFailure: NodeJS.ErrnoException | undefined;
  /**
   * Bytes known to be on disk: the file's size when the last fsync that completed
   * started. `close()` skips its fsync when this equals `#goodSize` (nothing written
   * since), so a run's last save point and its close cost one fsync, not two.
   */
  #durableSize: number | undefined;
  /** The device and inode of our descriptor (taken at the first sync). */
  #identity: { ino: number; dev: number } | undefined;
  #closed = false;
  readonly #offThread: boolean;
  /** The off-thread fsync running now, and the one queued behind it (for writes made since it began). */
  #flushing: Promise<void> | undefined;
  #flushAgain: Promise<void> | undefined;

  private constructor(
    file: string,
    readOnly: boolean,
    lock?: SessionLock,
    fd?: number,
    goodSize?: number,
    offThread = false,
  ) {
    this.path = file;
    this.readOnly = readOnly;
    this.#lock = lock;
    this.#fd = fd;
    this.#goodSize = goodSize;
    this.#offThread = offThread;
  }

  /** Creates a new session file holding only `header`; fails if the file exists. */
  static create(file: string, header: SessionHeader, options: JsonlOpenOptions = {}): JsonlStorage {
    const problem = headerProblem(header);
    if (problem !== undefined) throw invalidArgument(`invalid session header: ${problem}`);
    const lock = SessionLock.acquire(file);
    let fd: number | undefined;
    try {
      fd = fs.openSync(file, "ax");
      const line = Buffer.from(`${JSON.stringify(header)}\n`, "utf8");
      writeFully(fd, line);
      fs.fsyncSync(fd);
      syncDirectory(path.dirname(file));
      const storage = new JsonlStorage(file, false, lock, fd, line.length, options.syncOffThread === true);
      storage.#durableSize = line.length;
      return storage;
    } catch (error) {
      if (fd !== undefined) {
        fs.closeSync(fd);
        fs.rmSync(file, { force: true }); // we created it; a half-written header must not linger
      }
      lock.release();
      if (error instanceof HarnessError) throw error;
      const what = (error as { code?: string }).code === "EEXIST" ? "already exists" : describeError(error);
      throw sessionError(`cannot create session file ${file}: ${what}`, { file, cause: error });
    }
  }

  /** Opens an existing session file; writable (and locked) unless `readOnly`. */
  static open(file: string, options: JsonlOpenOptions = {}): JsonlStorage {
    if (options.readOnly) {
      if (!fs.existsSync(file)) throw sessionError(`session file not found: ${file}`, { file });
      return new JsonlStorage(file, true);
    }
    const lock = SessionLock.acquire(file);
    try {
      // No O_CREAT: a session file that is missing must stay missing.
      const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND);
      return new JsonlStorage(file, false, lock, fd, undefined, options.syncOffThread === true);
    } catch (error) {
      lock.release();
      const code = (error as { code?: string }).code;
      const what = code === "ENOENT" ? "not found" : describeError(error);
      throw sessionError(`cannot open session file ${file}: ${what}`, { file, cause: error });
    }
  }

  /** Bytes of whole lines handed to the OS: where the next append starts (`undefined` before the first load). */
  get writtenSize(): number | undefined {
    return this.#goodSize;
  }

  /**
   * Bytes known to be on disk: the written size when the last completed fsync
   * started (`undefined` until one completed). Equal to `writtenSize` once every
   * write made so far survives a power loss.
   */
  get durableSize(): number | undefined {
    return this.#durableSize;
  }

  load(): LoadedSession {
    this.#assertOpen("load");
    let parsed: ParsedFile;
    let size: number;
    let fd: number | undefined;
    try {
      fd = fs.openSync(this.path, "r");
      const reader = fd;
      parsed = parseSessionFile(this.path, (buffer, offset, length, position) =>
        fs.readSync(reader, buffer, offset, length, position),
      );
      size = fs.fstatSync(fd).size;
    } catch (error) {
      if (error instanceof HarnessError) throw error;
      throw sessionError(`cannot read session file ${this.path}: ${describeError(error)}`, {
        file: this.path,
        cause: error,
      });
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
    this.#goodSize = parsed.goodSize;
    if (parsed.goodSize < size && !this.readOnly) {
      this.#truncate(parsed.goodSize);
      this.#sync();
    }
    const action = this.readOnly ? "ignored" : "dropped";
    const warnings =
      parsed.torn === undefined
        ? []
        : [`${this.path} line ${parsed.torn.line}: ${action} ${parsed.torn.what}`];
    return { header: parsed.header, entries: parsed.entries, warnings, validated: true, byId: parsed.byId };
  }

  append(entry: StoredEntry): void {
    this.#write([entry]);
  }

  /** Appends `entries` as one write group: after a crash, all of them load or none. */
  appendAll(entries: readonly StoredEntry[]): void {
    if (entries.length > 0) this.#write(entries);
  }

  #write(entries: readonly StoredEntry[]): void {
    this.#assertOpen("append to");
    if (this.#fd === undefined)
      throw sessionError(`session file ${this.path} is open read-only`, { file: this.path });
    this.#throwSyncFailure();
    // Appending without a load would land behind an unrepaired torn tail.
    if (this.#goodSize === undefined) this.load();
    let bytes: Buffer;
    try {
      bytes = Buffer.from(encodeEntries(entries), "utf8");
    } catch (error) {
      const ids = entries.map((entry) => entry.id).join(", ");
      throw invalidArgument(`entry ${ids} cannot be serialised: ${describeError(error)}`, error);
    }
    const goodSize = this.#goodSize as number;
    if (this.#tailDirty) this.#truncate(goodSize);
    try {
      // One write call: a group is never interleaved with another line of ours.
      writeFully(this.#fd, bytes);
    } catch (error) {
      try {
        this.#truncate(goodSize);
      } catch {
        this.#tailDirty = true; // retried before the next append; load() repairs it too
      }
      throw sessionError(`cannot append to session file ${this.path}: ${describeError(error)}`, {
        file: this.path,
        cause: error,
      });
    }
    this.#goodSize = goodSize + bytes.length;
  }

  /**
   * A durability point. Checks the file is still ours, then fsyncs: with
   * `wait: false` the fsync runs off the main thread and overlapping calls
   * coalesce into one (group commit); a failure surfaces on the next append or
   * sync. With `wait: true` (default) it blocks until the data is on disk, or with
   * `syncOffThread` returns a promise that resolves then (rejects if it failed).
   */
  sync(options: { wait?: boolean } = {}): Promise<void> | undefined {
    this.#assertOpen("sync");
    if (this.#fd === undefined) return undefined; // read-only: nothing of ours to flush
    this.#throwSyncFailure();
    let current: fs.Stats | undefined;
    try {
      current = fs.statSync(this.path);
    } catch (error) {
      if ((error as { code?: string }).code !== "ENOENT") {
        throw sessionError(`cannot stat session file ${this.path}: ${describeError(error)}`, {
          file: this.path,
          cause: error,
        });
      }
    }
    // A descriptor's inode never changes: fstat it once, not at every save point.
    this.#identity ??= fs.fstatSync(this.#fd);
    const ours = this.#identity;
    // Writes to a deleted or replaced file go nowhere anyone will read: fail loudly
    // rather than recreate the path and pretend the history is intact.
    if (current === undefined || current.ino !== ours.ino || current.dev !== ours.dev) {
      throw sessionError(`session file was deleted or replaced while in use: ${this.path}`, {
        file: this.path,
      });
    }
    if (this.#offThread) {
      const flushed = this.#flushOffThread();
      if (options.wait !== false) return flushed;
      // Not waited for: a failure surfaces on the next append or sync.
      flushed.catch((error: NodeJS.ErrnoException) => {
        this.#syncFailure ??= (error.cause as NodeJS.ErrnoException | undefined) ?? error;
      });
      return undefined;
    }
    if (options.wait === false) this.#syncInBackground();
    else this.#sync();
    return undefined;
  }

  /**
   * An fsync on the thread pool covering every write made before this call: the one
   * running now if none was made since it began, else one more after it (shared by
   * every caller until it starts).
   */
  #flushOffThread(): Promise<void> {
    if (this.#flushing !== undefined) {
      this.#flushAgain ??= this.#flushing.then(
        () => this.#nextFlush(),
        () => this.#nextFlush(),
      );
      return this.#flushAgain;
    }
    const fd = this.#fd as number;
    const size = this.#goodSize;
    const flush = new Promise<void>((resolve, reject) => {
      fs.fsync(fd, (error) => {
        if (this.#flushing === flush) this.#flushing = undefined;
        if (!error) this.#durableSize = size;
        if (error)
          reject(
            sessionError(`cannot sync session file ${this.path}: ${describeError(error)}`, {
              file: this.path,
              cause: error,
            }),
          );
        else resolve();
      });
    });
    this.#flushing = flush;
    return flush;
  }

  #nextFlush(): Promise<void> {
    this.#flushAgain = undefined;
    return this.#flushOffThread();
  }

  #syncInBackground(): void {
    if (this.#syncing) {
      this.#syncAgain = true;
      return;
    }
    this.#syncing = true;
    const size = this.#goodSize;
    fs.fdatasync(this.#fd as number, (error) => {
      this.#syncing = false;
      if (error) this.#syncFailure ??= error;
      else this.#durableSize = size;
      if (this.#closed) {
        this.#finishClose();
        return;
      }
      if (this.#syncAgain) {
        this.#syncAgain = false;
        this.#syncInBackground();
      }
    });
  }

  #throwSyncFailure(): void {
    const failure = this.#syncFailure;
    if (failure === undefined) return;
    this.#syncFailure = undefined;
    throw sessionError(`cannot sync session file ${this.path}: ${describeError(failure)}`, {
      file: this.path,
      cause: failure,
    });
  }

  close(): Promise<void> | undefined {
    if (this.#closed) return undefined;
    this.#closed = true;
    if (this.#offThread && this.#fd !== undefined) return this.#closeOffThread();
    // Already on disk (the last save point's fsync, nothing appended since): no second fsync.
    const durable =
      !this.#tailDirty && this.#durableSize !== undefined && this.#durableSize === this.#goodSize;
    if (this.#fd !== undefined && !durable) {
      try {
        fs.fsyncSync(this.#fd);
      } catch {
        // Every append already reached the OS; a failed final flush cannot be reported to anyone.
      }
    }
    this.#lock?.release();
    // A background fsync still owns the descriptor: it closes it when it completes.
    if (!this.#syncing) this.#finishClose();
    return undefined;
  }

  /** The final fsync off the thread, then the lock, then the descriptor: nobody else writes before our data is on disk. */
  async #closeOffThread(): Promise<void> {
    try {
      await this.#flushOffThread();
    } catch {
      // Every append already reached the OS; a failed final flush cannot be reported to anyone.
    }
    this.#lock?.release();
    this.#finishClose();
  }

  #finishClose(): void {
    if (this.#fd === undefined) return;
    try {
      fs.closeSync(this.#fd);
    } catch {
      // Nothing useful to do: the data was flushed above.
    }
    this.#fd = undefined;
  }

  #assertOpen(operation: string): void {
    if (this.#closed)
      throw sessionError(`cannot ${operation} closed session file ${this.path}`, { file: this.path });
  }

  #truncate(size: number): void {
    try {
      fs.ftruncateSync(this.#fd as number, size);
      this.#tailDirty = false;
      this.#durableSize = undefined; // the cut is not on disk until the next fsync
    } catch (error) {
      throw sessionError(`cannot repair session file ${this.path}: ${describeError(error)}`, {
        file: this.path,
        cause: error,
      });
    }
  }

  #sync(): void {
    try {
      fs.fsyncSync(this.#fd as number);
      this.#durableSize = this.#goodSize;
    } catch (error) {
      throw sessionError(`cannot sync session file ${this.path}: ${describeError(error)}`, {
        file: this.path,
        cause: error,
      });
    }
  }
}

/** Writes all of `data`, continuing after short writes; a write that makes no progress is an error. */
function writeFully(fd: number, data: Buffer): void {
  let offset = 0;
  while (offset < data.length) {
    const written = fs.writeSync(fd, data, offset, data.length - offset);
    if (written <= 0) throw Object.assign(new Error("short write: no bytes written"), { code: "EIO" });
    offset += written;
  }
}

/** Makes a new file's directory entry durable. Not every platform can fsync a directory. */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, "r");
    fs.fsyncSync(fd);
  } catch {
    // Best effort (Windows cannot open a directory); the file's own fsync still happened.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
