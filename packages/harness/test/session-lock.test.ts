import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { HarnessError } from "../src/errors.js";
import { createSessionHeader, JsonlStorage, Session } from "../src/session/index.js";
import { ensureBuilt, packageDir } from "./reliability/support.js";

/** The built package: a second copy of the session layer, as a worker thread or a bundled duplicate loads it. */
const builtIndex = pathToFileURL(path.join(packageDir, "dist/index.js")).href;
beforeAll(() => ensureBuilt());

const dirs: string[] = [];
const children: ChildProcess[] = [];
const sessions: Session[] = [];
afterEach(() => {
  for (const session of sessions.splice(0)) session.close();
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A session file with two entries, closed (unlocked). */
function sessionFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-"));
  dirs.push(dir);
  const file = path.join(dir, "s.jsonl");
  const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
  session.appendMessage({ role: "user", content: "hello", timestamp: 1 });
  session.append({ type: "custom", customType: "x" });
  session.close();
  return file;
}

function keep(session: Session): Session {
  sessions.push(session);
  return session;
}

function caught(action: () => unknown): HarnessError {
  try {
    action();
  } catch (error) {
    if (error instanceof HarnessError) return error;
    throw error;
  }
  throw new Error("expected a HarnessError, but nothing was thrown");
}

/**
 * Starts a real second process that takes the lock the way the harness does
 * (`wx` create of `<file>.lock` holding `{ pid, hostname, acquiredAt }`) and holds it
 * until killed. Resolves once the lock file exists.
 */
function holdLockInChild(file: string): Promise<ChildProcess> {
  const script = `
    const fs = require("node:fs"), os = require("node:os");
    const fd = fs.openSync(process.argv[1] + ".lock", "wx");
    fs.writeSync(fd, JSON.stringify({ pid: process.pid, hostname: os.hostname(), acquiredAt: Date.now() }));
    fs.closeSync(fd);
    process.stdout.write("locked\\n");
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["-e", script, file], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("locked")) resolve(child);
    });
    child.on("exit", (code) => reject(new Error(`lock holder exited early (${code})`)));
  });
}

/** The pid of a process that has already exited. */
function deadPid(): number {
  const result = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
  return Number(result.stdout.toString());
}

describe("session lock", () => {
  it("a second writable open in the same process fails with session_in_use until the first closes", () => {
    const file = sessionFile();
    const first = keep(Session.open(JsonlStorage.open(file)));
    const error = caught(() => JsonlStorage.open(file));
    expect(error.code).toBe("session_in_use");
    expect(error.message).toContain("session in use");
    expect(error.message).toContain(`pid ${process.pid}`);
    // The same file reached by another spelling of its path is the same lock.
    const detour = path.join(path.dirname(file), ".", "..", path.basename(path.dirname(file)), "s.jsonl");
    expect(caught(() => JsonlStorage.open(detour)).code).toBe("session_in_use");
    // Readers take no lock.
    expect(Session.open(JsonlStorage.open(file, { readOnly: true })).entries()).toHaveLength(2);

    first.close();
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
    const second = keep(Session.open(JsonlStorage.open(file)));
    expect(second.entries()).toHaveLength(2);
  });

  it("creating a file that another session has locked is refused as in use", () => {
    const file = sessionFile();
    keep(Session.open(JsonlStorage.open(file)));
    expect(caught(() => JsonlStorage.create(file, createSessionHeader())).code).toBe("session_in_use");
  });

  it("a lock held by a live child process blocks the open and leaves the session file byte for byte", async () => {
    const file = sessionFile();
    const before = fs.readFileSync(file);
    const child = await holdLockInChild(file);

    const error = caught(() => Session.open(JsonlStorage.open(file)));
    expect(error.code).toBe("session_in_use");
    expect(error.message).toContain(`process ${child.pid}`);
    expect(fs.readFileSync(file)).toEqual(before);
    expect(JSON.parse(fs.readFileSync(`${file}.lock`, "utf8")).pid).toBe(child.pid);

    // Once the holder dies without releasing, its lock is stale and taken over.
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    const session = keep(Session.open(JsonlStorage.open(file)));
    expect(session.entries()).toHaveLength(2);
    expect(JSON.parse(fs.readFileSync(`${file}.lock`, "utf8")).pid).toBe(process.pid);
  });

  it("a stale lock naming a dead pid is taken over", () => {
    const file = sessionFile();
    const pid = deadPid();
    fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid, hostname: os.hostname(), acquiredAt: 1 }));
    const session = keep(Session.open(JsonlStorage.open(file)));
    session.appendMessage({ role: "user", content: "mine now", timestamp: 2 });
    expect(JSON.parse(fs.readFileSync(`${file}.lock`, "utf8")).pid).toBe(process.pid);
    session.close();
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it("an unreadable lock file is taken over once old, but respected while fresh", () => {
    const file = sessionFile();
    fs.writeFileSync(`${file}.lock`, "");
    // Fresh: its creator may be between creating and writing it.
    expect(caught(() => JsonlStorage.open(file)).code).toBe("session_in_use");
    const old = new Date(Date.now() - 60_000);
    fs.writeFileSync(`${file}.lock`, "not json at all");
    fs.utimesSync(`${file}.lock`, old, old);
    keep(Session.open(JsonlStorage.open(file)));
  });

  it("a lock from another host is respected, since its pid cannot be checked here", () => {
    const file = sessionFile();
    fs.writeFileSync(
      `${file}.lock`,
      JSON.stringify({ pid: deadPid(), hostname: "elsewhere.example", acquiredAt: 1 }),
    );
    const error = caught(() => JsonlStorage.open(file));
    expect(error.code).toBe("session_in_use");
    expect(error.message).toContain("elsewhere.example");
  });

  it("closing does not delete a lock that another process has since taken over", () => {
    const file = sessionFile();
    const session = Session.open(JsonlStorage.open(file));
    const successor = JSON.stringify({ pid: 4242, hostname: os.hostname(), acquiredAt: 2, token: "theirs" });
    fs.writeFileSync(`${file}.lock`, successor);
    session.close();
    expect(fs.readFileSync(`${file}.lock`, "utf8")).toBe(successor);
  });
});

/**
 * Runs `body` (an async function body that gets `file`, `lib` - the built package - and
 * `port` to report with) in a worker thread of this process; resolves with its messages.
 */
function inWorker(file: string, body: string): { messages: Promise<string[]>; worker: Worker } {
  const source = `
    const { parentPort, workerData } = require("node:worker_threads");
    (async () => {
      const lib = await import(workerData.builtIndex);
      const file = workerData.file;
      const say = (line) => parentPort.postMessage(line);
      ${body}
    })().catch((error) => parentPort.postMessage("threw " + (error && error.stack)));
  `;
  const worker = new Worker(source, { eval: true, workerData: { file, builtIndex } });
  const seen: string[] = [];
  const messages = new Promise<string[]>((resolve, reject) => {
    worker.on("message", (line: string) => seen.push(line));
    worker.on("error", reject);
    worker.on("exit", () => resolve(seen));
  });
  return { messages, worker };
}

describe("session lock: one writer per file, whoever asks", () => {
  it("a symlink to the file, or to a folder above it, meets the same lock (in this process and in another)", async () => {
    const file = sessionFile();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "rein-alias-"));
    dirs.push(elsewhere);
    const fileLink = path.join(elsewhere, "alias.jsonl");
    const dirLink = path.join(elsewhere, "folder");
    fs.symlinkSync(file, fileLink);
    fs.symlinkSync(path.dirname(file), dirLink);
    const viaFolder = path.join(dirLink, "s.jsonl");

    const held = keep(Session.open(JsonlStorage.open(fileLink)));
    expect(fs.existsSync(`${file}.lock`)).toBe(true); // beside the real file
    expect(fs.existsSync(`${fileLink}.lock`)).toBe(false);
    for (const spelling of [file, fileLink, viaFolder]) {
      expect(caught(() => JsonlStorage.open(spelling)).code).toBe("session_in_use");
    }
    held.close();
    expect(fs.existsSync(`${file}.lock`)).toBe(false);

    // Another process holding the file by its real path blocks an open through either link.
    const child = await holdLockInChild(file);
    for (const spelling of [fileLink, viaFolder]) {
      const error = caught(() => JsonlStorage.open(spelling));
      expect(error.code).toBe("session_in_use");
      expect(error.message).toContain(`process ${child.pid}`);
    }
  });

  it("a worker thread cannot open a session this thread holds, and this thread cannot open one a worker holds", async () => {
    const file = sessionFile();
    const held = keep(Session.open(JsonlStorage.open(file)));
    const lockBefore = fs.readFileSync(`${file}.lock`, "utf8");
    const first = inWorker(
      file,
      `try { lib.Session.open(lib.JsonlStorage.open(file)); say("opened"); }
       catch (error) { say(error.code + " " + error.message); }`,
    );
    const replies = await first.messages;
    expect(replies).toHaveLength(1);
    expect(replies[0]).toMatch(/^session_in_use session in use: .* another thread of this process/);
    // The refused worker left the holder's lock alone, and the holder can still write.
    expect(fs.readFileSync(`${file}.lock`, "utf8")).toBe(lockBefore);
    held.append({ type: "custom", customType: "still-mine" });
    held.close();

    // Now a worker holds it until told to close.
    const second = inWorker(
      file,
      `const session = lib.Session.open(lib.JsonlStorage.open(file));
       say("opened");
       parentPort.once("message", () => { session.close(); say("closed"); parentPort.close(); });`,
    );
    await new Promise<void>((resolve) => second.worker.once("message", () => resolve()));
    const error = caught(() => JsonlStorage.open(file));
    expect(error.code).toBe("session_in_use");
    expect(error.message).toContain("another thread of this process");
    second.worker.postMessage("close");
    expect(await second.messages).toEqual(["opened", "closed"]);
    keep(Session.open(JsonlStorage.open(file))); // released by the worker: free again
  });

  it("a second copy of the package in this thread sees the first copy's lock", async () => {
    const file = sessionFile();
    const held = keep(Session.open(JsonlStorage.open(file)));
    const copy = (await import(builtIndex)) as typeof import("../src/index.js");
    expect(copy.JsonlStorage).not.toBe(JsonlStorage);
    let thrown: unknown;
    try {
      copy.JsonlStorage.open(file);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "session_in_use" });
    expect((thrown as Error).message).toContain(`this process (pid ${process.pid})`);
    held.append({ type: "custom", customType: "still-mine" });
    expect(JSON.parse(fs.readFileSync(`${file}.lock`, "utf8")).pid).toBe(process.pid);
  });

  it("a lock naming this pid but an earlier process start, or a live pid that started later, is stale", () => {
    const file = sessionFile();
    // Same pid, another process start: a leftover of an earlier process with our pid.
    fs.writeFileSync(
      `${file}.lock`,
      JSON.stringify({
        pid: process.pid,
        hostname: os.hostname(),
        acquiredAt: 1,
        token: "old",
        started: "proc:1",
      }),
    );
    keep(Session.open(JsonlStorage.open(file))).close();
    // A live pid (our parent) whose process started after the recorded start: a reused pid.
    fs.writeFileSync(
      `${file}.lock`,
      JSON.stringify({
        pid: process.ppid,
        hostname: os.hostname(),
        acquiredAt: 1,
        token: "old",
        started: "proc:1",
      }),
    );
    keep(Session.open(JsonlStorage.open(file)));
    expect(JSON.parse(fs.readFileSync(`${file}.lock`, "utf8")).pid).toBe(process.pid);
  });

  it("a live holder that recorded its start is respected", async () => {
    const file = sessionFile();
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const lib = await import(${JSON.stringify(builtIndex)});
         lib.JsonlStorage.open(process.argv[1]); process.stdout.write("locked\\n"); setInterval(() => {}, 1000);`,
        file,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(child);
    await new Promise<void>((resolve) =>
      child.stdout?.on("data", (chunk: Buffer) => chunk.toString().includes("locked") && resolve()),
    );
    const record = JSON.parse(fs.readFileSync(`${file}.lock`, "utf8"));
    expect(record).toMatchObject({ pid: child.pid, token: expect.any(String), started: expect.any(String) });
    const error = caught(() => JsonlStorage.open(file));
    expect(error.code).toBe("session_in_use");
    expect(error.message).toContain(`process ${child.pid}`);
  });
});
