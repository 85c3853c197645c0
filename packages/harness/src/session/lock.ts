/**
 * Exclusive lock on one session file, so two writers never interleave lines.
 *
 * Invariants:
 * - One lock per file, not per spelling: the lock is `<canonical file>.lock`, where the
 *   canonical file is the realpath (of the file, or of its folder for a file not yet
 *   created), so a symlink to the file or to a folder above it meets the same lock.
 * - Creating a lock is one `O_EXCL` create; taking over a stale one is a
 *   compare-and-swap: the contender first claims `<lock>.takeover-<fingerprint of the
 *   stale lock>` (itself a lock, by the same rules), re-reads the lock, and only if it
 *   is still that stale one renames its claim over it. Any number of racing processes
 *   get exactly one holder; the others see a live holder and get `session_in_use`.
 * - A lock names pid, host, process start and a per-holder token. This process's locks
 *   are in a registry on `globalThis`, so a second copy of this package in the same
 *   thread sees them; another thread of this process (same pid and start, unknown
 *   token) is a live holder too. Only a lock whose process is gone (dead pid, or a pid
 *   reused by a process that started later) or an unreadable lock older than a grace
 *   period is stale.
 */
import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describeError, sessionError, sessionInUse } from "../errors.js";

/** The content of a lock file (and of a takeover claim). */
export interface LockRecord {
  pid: number;
  hostname: string;
  acquiredAt: number;
  /** Tells this holder from any other, including another thread with the same pid. */
  token?: string;
  /** When the holder's process started (`proc:<ticks>` on Linux, else `uptime:<ms>`). */
  started?: string;
}

/**
 * An unparseable lock file younger than this may be one that its creator is still
 * writing (between the `wx` create and the write), so it counts as held.
 */
const UNREADABLE_GRACE_MS = 2_000;
/** Takeover claims of takeover claims: each level needs a process killed inside a claim. */
const MAX_TAKEOVER_DEPTH = 4;

interface Registry {
  /** Lock path -> this process's holder (any copy of this package in this thread). */
  held: Map<string, { release(): void; readonly token: string }>;
  releaseOnExit: boolean;
}
const REGISTRY = Symbol.for("@rein/harness/session-locks");

function registry(): Registry {
  const scope = globalThis as { [REGISTRY]?: Registry };
  scope[REGISTRY] ??= { held: new Map(), releaseOnExit: false };
  return scope[REGISTRY];
}

export class SessionLock {
  /** The session file this lock protects, as the caller named it. */
  readonly file: string;
  readonly lockPath: string;
  readonly token: string;
  #released = false;

  private constructor(file: string, lockPath: string, token: string) {
    this.file = file;
    this.lockPath = lockPath;
    this.token = token;
  }

  /** Takes the lock on `file` or throws `session_in_use` naming the holder. */
  static acquire(file: string): SessionLock {
    const lockPath = `${canonicalFile(file)}.lock`;
    const held = registry().held;
    if (held.has(lockPath)) throw sessionInUse(file, `this process (pid ${process.pid})`);
    const record: LockRecord = {
      pid: process.pid,
      hostname: os.hostname(),
      acquiredAt: Date.now(),
      token: randomUUID(),
      started: processStart(),
    };
    claim(lockPath, record, file, 0);
    const lock = new SessionLock(file, lockPath, record.token as string);
    held.set(lockPath, lock);
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
    const held = registry().held;
    if (held.get(this.lockPath) === this) held.delete(this.lockPath);
    // A process that judged us dead may have taken the lock over; its file is not ours to delete.
    if (readRecord(readBytes(this.lockPath))?.token !== this.token) return;
    try {
      fs.unlinkSync(this.lockPath);
    } catch {
      // Best effort: a leftover lock naming a dead pid is taken over by the next opener.
    }
  }
}

/**
 * The one path of a session file: its realpath, or for a file that does not exist yet
 * the realpath of its folder plus its name.
 */
export function canonicalFile(file: string): string {
  const absolute = path.resolve(file);
  try {
    return fs.realpathSync(absolute);
  } catch {
    try {
      return path.join(fs.realpathSync(path.dirname(absolute)), path.basename(absolute));
    } catch {
      return absolute; // no folder either: creating the file will say so
    }
  }
}

/** Makes `target` hold `record`, creating it or taking a stale one over; else throws `session_in_use`. */
function claim(target: string, record: LockRecord, file: string, depth: number): void {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (createExclusive(target, record)) return;
    const seen = observe(target);
    if (seen === undefined) continue; // released meanwhile: race for it again
    const holder = liveHolder(seen);
    if (holder !== undefined) throw sessionInUse(file, holder);
    if (depth >= MAX_TAKEOVER_DEPTH) throw sessionInUse(file, "processes taking over its stale lock");
    const marker = `${target}.takeover-${seen.fingerprint}`;
    claim(marker, record, file, depth + 1);
    // We hold the claim on this stale generation: compare, then swap.
    const now = observe(target);
    if (now?.fingerprint === seen.fingerprint) {
      try {
        fs.renameSync(marker, target);
      } catch (error) {
        removeIfOurs(marker, record.token);
        throw lockFailure(target, error);
      }
      return;
    }
    removeIfOurs(marker, record.token);
    if (now !== undefined) {
      throw sessionInUse(file, liveHolder(now) ?? "a process that took over its stale lock first");
    }
  }
  throw sessionInUse(file, "processes racing for it");
}

/** Creates `target` exclusively holding `record`; `false` if it already exists. */
function createExclusive(target: string, record: LockRecord): boolean {
  let fd: number;
  try {
    fd = fs.openSync(target, "wx");
  } catch (error) {
    if (errorCode(error) === "EEXIST") return false;
    throw lockFailure(target, error);
  }
  try {
    // One small write, so a reader almost never sees a partial record.
    fs.writeSync(fd, JSON.stringify(record));
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(target, { force: true });
    throw lockFailure(target, error);
  }
  fs.closeSync(fd);
  return true;
}

interface Observed {
  record: LockRecord | undefined;
  mtimeMs: number;
  /** Identifies this generation of the file: inode, modification time and content. */
  fingerprint: string;
}

function observe(target: string): Observed | undefined {
  let stat: fs.BigIntStats;
  let bytes: Buffer;
  try {
    stat = fs.statSync(target, { bigint: true });
    bytes = fs.readFileSync(target);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return undefined;
    throw lockFailure(target, error);
  }
  const fingerprint = createHash("sha256")
    .update(`${stat.dev}:${stat.ino}:${stat.mtimeNs}:`)
    .update(bytes)
    .digest("hex")
    .slice(0, 16);
  return { record: readRecord(bytes), mtimeMs: Number(stat.mtimeMs), fingerprint };
}

/** Describes the live holder of an observed lock, or `undefined` if it is stale. */
function liveHolder(seen: Observed): string | undefined {
  const record = seen.record;
  if (record === undefined) {
    return Date.now() - seen.mtimeMs < UNREADABLE_GRACE_MS
      ? "a process that is still writing its lock file"
      : undefined;
  }
  // Another host's pids mean nothing here; only its own release can free the lock.
  if (record.hostname !== os.hostname()) return `process ${record.pid} on host ${record.hostname}`;
  if (record.pid === process.pid) {
    if (record.token !== undefined && [...registry().held.values()].some((h) => h.token === record.token)) {
      return `this process (pid ${process.pid})`;
    }
    // Same pid and same start: another thread (or package copy) of this very process.
    if (record.started !== undefined && sameStart(record.started, processStart())) {
      return `another thread of this process (pid ${process.pid})`;
    }
    // Otherwise a leftover of an earlier process that had our pid (common in containers).
    return undefined;
  }
  try {
    process.kill(record.pid, 0);
  } catch (error) {
    if (errorCode(error) !== "EPERM") return undefined;
  }
  // A live pid that started after the holder did is a reused pid: the holder is gone.
  const theirs = record.started === undefined ? undefined : startOf(record.pid);
  if (theirs !== undefined && !sameStart(theirs, record.started as string)) return undefined;
  return `process ${record.pid}`;
}

function readBytes(target: string): Buffer | undefined {
  try {
    return fs.readFileSync(target);
  } catch {
    return undefined;
  }
}

function readRecord(bytes: Buffer | undefined): LockRecord | undefined {
  if (bytes === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const record = value as Partial<LockRecord>;
  if (!Number.isInteger(record.pid) || (record.pid as number) <= 0 || typeof record.hostname !== "string") {
    return undefined;
  }
  if (record.token !== undefined && typeof record.token !== "string") return undefined;
  if (record.started !== undefined && typeof record.started !== "string") return undefined;
  return record as LockRecord;
}

function removeIfOurs(target: string, token: string | undefined): void {
  if (readRecord(readBytes(target))?.token !== token) return;
  fs.rmSync(target, { force: true });
}

let ownStart: string | undefined;

/** This process's start, the same in every thread of it. */
function processStart(): string {
  ownStart ??= startOf(process.pid) ?? `uptime:${Math.round(Date.now() - process.uptime() * 1000)}`;
  return ownStart;
}

/** A process's start time in clock ticks since boot (Linux `/proc/<pid>/stat`, field 22). */
function startOf(pid: number): string | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // Fields after the command name, which may itself contain spaces and parentheses.
  const ticks = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  return ticks === undefined || !/^\d+$/.test(ticks) ? undefined : `proc:${ticks}`;
}

function sameStart(a: string, b: string): boolean {
  if (a.startsWith("uptime:") && b.startsWith("uptime:")) {
    // Derived from a clock and an uptime read at different moments: allow some drift.
    return Math.abs(Number(a.slice(7)) - Number(b.slice(7))) < 2_000;
  }
  return a === b;
}

function installReleaseOnExit(): void {
  const scope = registry();
  if (scope.releaseOnExit) return;
  scope.releaseOnExit = true;
  process.on("exit", () => {
    for (const lock of [...scope.held.values()]) lock.release();
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
