/**
 * Exclusive lock on one session file, so two writers never interleave lines.
 *
 * Invariant: while a `SessionLock` for a file is held, `<file>.lock` exists and names
 * this process, and no other lock for that file can be acquired, by another process
 * on this host or by this process (an in-process registry catches the second open,
 * since `process.kill(ownPid, 0)` cannot tell two opens apart). A lock whose holder is
 * dead, or whose content is unreadable and old, is stale and is taken over.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describeError, sessionError, sessionInUse } from "../errors.js";

/** The content of a lock file. `token` tells our own lock from a successor's. */
export interface LockRecord {
  pid: number;
  hostname: string;
  acquiredAt: number;
  token?: string;
}

/**
 * An unparseable lock file younger than this may be one that its creator is still
 * writing (between the `wx` create and the write), so it counts as held.
 */
const UNREADABLE_GRACE_MS = 2_000;

const held = new Map<string, SessionLock>();
let releaseOnExitInstalled = false;

export class SessionLock {
  /** The session file this lock protects. */
  readonly file: string;
  readonly lockPath: string;
  readonly #key: string;
  readonly #token: string;
  #released = false;

  private constructor(file: string, key: string, token: string) {
    this.file = file;
    this.#key = key;
    this.lockPath = `${key}.lock`;
    this.#token = token;
  }

  /** Takes the lock on `file` or throws `session_in_use` naming the holder. */
  static acquire(file: string): SessionLock {
    const key = path.resolve(file);
    if (held.has(key)) throw sessionInUse(file, `this process (pid ${process.pid})`);
    const lockPath = `${key}.lock`;
    const record: LockRecord = {
      pid: process.pid,
      hostname: os.hostname(),
      acquiredAt: Date.now(),
      token: randomUUID(),
    };
    if (!createLockFile(lockPath, record)) {
      const holder = liveHolder(lockPath);
      if (holder !== undefined) throw sessionInUse(file, holder);
      // Stale: remove it and race for it once more. Whoever loses the `wx` create
      // sees the winner's live lock and reports it.
      try {
        fs.unlinkSync(lockPath);
      } catch (error) {
        if (errorCode(error) !== "ENOENT") throw lockFailure(lockPath, error);
      }
      if (!createLockFile(lockPath, record)) {
        throw sessionInUse(file, liveHolder(lockPath) ?? "another process that took over a stale lock");
      }
    }
    const lock = new SessionLock(file, key, record.token as string);
    held.set(key, lock);
    installReleaseOnExit();
    return lock;
  }

  get released(): boolean {
    return this.#released;
  }

  /** Removes the lock file if it is still ours. Idempotent; never throws. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    if (held.get(this.#key) === this) held.delete(this.#key);
    // A process that judged us dead may have taken the lock over; its file is not ours to delete.
    if (readRecord(this.lockPath)?.token !== this.#token) return;
    try {
      fs.unlinkSync(this.lockPath);
    } catch {
      // Best effort: a leftover lock naming a dead pid is taken over by the next opener.
    }
  }
}

/** Creates the lock file exclusively; `false` if it already exists. */
function createLockFile(lockPath: string, record: LockRecord): boolean {
  let fd: number;
  try {
    fd = fs.openSync(lockPath, "wx");
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw lockFailure(lockPath, error);
  }
  try {
    // One small write, so a reader almost never sees a partial record.
    fs.writeSync(fd, JSON.stringify(record));
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(lockPath, { force: true });
    throw lockFailure(lockPath, error);
  }
  fs.closeSync(fd);
  return true;
}

/** Describes the live holder of an existing lock file, or `undefined` if the lock is stale. */
function liveHolder(lockPath: string): string | undefined {
  const record = readRecord(lockPath);
  if (record === undefined) {
    let age: number;
    try {
      age = Date.now() - fs.statSync(lockPath).mtimeMs;
    } catch {
      return undefined; // gone meanwhile: free
    }
    return age < UNREADABLE_GRACE_MS ? "a process that is still writing its lock file" : undefined;
  }
  // Another host's pids mean nothing here; only its own release can free the lock.
  if (record.hostname !== os.hostname()) return `process ${record.pid} on host ${record.hostname}`;
  // Our own pid but not in the registry: a leftover of an earlier process that had the
  // same pid (common in containers, where the main process gets the same pid each run).
  if (record.pid === process.pid) return undefined;
  try {
    process.kill(record.pid, 0);
    return `process ${record.pid}`;
  } catch (error) {
    return errorCode(error) === "EPERM" ? `process ${record.pid}` : undefined;
  }
}

function readRecord(lockPath: string): LockRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(fs.readFileSync(lockPath, "utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Partial<LockRecord>;
  if (!Number.isInteger(record.pid) || (record.pid as number) <= 0 || typeof record.hostname !== "string") {
    return undefined;
  }
  return record as LockRecord;
}

function installReleaseOnExit(): void {
  if (releaseOnExitInstalled) return;
  releaseOnExitInstalled = true;
  process.on("exit", () => {
    for (const lock of [...held.values()]) lock.release();
  });
}

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
}

function lockFailure(lockPath: string, error: unknown) {
  return sessionError(`cannot lock session: ${lockPath}: ${describeError(error)}`, {
    file: lockPath,
    cause: error,
  });
}
