import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessError } from "../src/errors.js";
import { createSessionHeader, JsonlStorage, Session } from "../src/session/index.js";

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
