/**
 * JSONL sessions opened with `syncOffThread` (what `rein worker` uses): the same fsync
 * points, run on the thread pool and awaited through the session (`whenStored`), so
 * one session's fsync does not stall the other runs of the process; overlapping syncs
 * coalesce; the lock is released only after the last fsync. And the store finds a
 * session by its exact id without listing the directory again, yet never returns a
 * file that is gone.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessError } from "../src/errors.js";
import { createSessionHeader, JsonlStorage, Session, SessionStore } from "../src/session/index.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-offthread-"));
  dirs.push(dir);
  return dir;
}

function caught(fn: () => unknown): HarnessError {
  try {
    fn();
  } catch (error) {
    return error as HarnessError;
  }
  throw new Error("expected a throw");
}

describe("JSONL sessions with syncOffThread", () => {
  it("sync() returns a promise the session tracks; syncs made while one runs share the next fsync", async () => {
    const file = path.join(tempDir(), "s.jsonl");
    const storage = JsonlStorage.create(file, createSessionHeader(), { syncOffThread: true });
    const session = Session.create(storage);
    session.append({ type: "session_info", name: "a" });
    const first = storage.sync();
    expect(first).toBeInstanceOf(Promise);
    session.append({ type: "session_info", name: "b" });
    const second = storage.sync();
    const third = storage.sync();
    // Both came after the first began: one more fsync covers them.
    expect(second).toBeInstanceOf(Promise);
    expect(third).toBe(second);
    expect(second).not.toBe(first);
    await Promise.all([first, second]);
    session.append({ type: "session_info", name: "c" });
    session.sync();
    const stored = session.whenStored();
    expect(stored).toBeInstanceOf(Promise);
    await stored;
    expect(session.whenStored()).toBeUndefined();
    await session.close();
    const names = Session.open(JsonlStorage.open(file, { readOnly: true }))
      .entries()
      .flatMap((entry) => (entry.type === "session_info" ? [entry.name] : []));
    expect(names).toEqual(["a", "b", "c"]);
  });

  it("close() keeps the lock until its last fsync is done, then releases it", async () => {
    const file = path.join(tempDir(), "s.jsonl");
    const session = Session.create(JsonlStorage.create(file, createSessionHeader(), { syncOffThread: true }));
    session.append({ type: "session_info", name: "last" });
    const closing = session.close();
    expect(closing).toBeInstanceOf(Promise);
    // Still ours while the final fsync runs: no other writer may start.
    expect(caught(() => JsonlStorage.open(file)).code).toBe("session_in_use");
    await closing;
    const again = Session.open(JsonlStorage.open(file));
    expect(again.entries().some((entry) => entry.type === "session_info" && entry.name === "last")).toBe(
      true,
    );
    again.close();
  });

  it("a harness run on an off-thread session stores every entry by the time prompt() resolves", async () => {
    const store = new SessionStore(tempDir(), { syncOffThread: true });
    const session = store.create();
    const id = session.id;
    const echo = echoTool();
    const f = fixture({ session, tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("done")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    // Settle waited for the fsync: nothing of the run is still on its way to the disk.
    expect(session.whenStored()).toBeUndefined();
    await f.harness.close();
    await session.close();
    const reopened = new SessionStore(store.dir).open(id);
    const roles = reopened
      .branch()
      .flatMap((entry) => (entry.type === "message" ? [entry.message.role] : []));
    expect(roles).toEqual(["user", "assistant", "toolResult", "assistant"]);
    reopened.close();
  });
});

describe("SessionStore lookup by exact id", () => {
  it("finds sessions created after its last listing, and never a file that is gone", () => {
    const dir = tempDir();
    const store = new SessionStore(dir);
    const a = store.create();
    const aId = a.id;
    a.close();
    expect(store.pathOf(aId)).toContain(aId);
    // Created by another store object (another process, as far as the first knows).
    const b = new SessionStore(dir).create();
    const bId = b.id;
    b.close();
    expect(store.pathOf(bId)).toContain(bId);
    // The file named in the last listing is gone: the store says so, as without a listing kept.
    fs.rmSync(store.pathOf(aId));
    expect(caught(() => store.pathOf(aId)).code).toBe("invalid_argument");
    // The same id under another file name (an import keeps ids): found at its new file.
    const moved = path.join(dir, `2020-01-01T00-00-00.000Z_${bId}.jsonl`);
    fs.renameSync(store.pathOf(bId), moved);
    expect(store.pathOf(bId)).toBe(moved);
  });
});
