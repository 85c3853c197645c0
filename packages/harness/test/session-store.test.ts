import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessError } from "../src/errors.js";
import { type AgentMessage, type Session, SessionStore } from "../src/session/index.js";

const dirs: string[] = [];
const sessions: Session[] = [];
afterEach(() => {
  for (const session of sessions.splice(0)) session.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function store(): SessionStore {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-"));
  dirs.push(dir);
  return new SessionStore(path.join(dir, "nested", "sessions"));
}
function keep(session: Session): Session {
  sessions.push(session);
  return session;
}
const user = (text: string): AgentMessage => ({
  role: "user",
  content: [{ type: "text", text }],
  timestamp: 1,
});

/** Sets a file's modification time, so "newest" does not depend on the clock's resolution. */
function touch(file: string, secondsAgo: number): void {
  const when = new Date(Date.now() - secondsAgo * 1000);
  fs.utimesSync(file, when, when);
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

describe("SessionStore", () => {
  it("create makes the directory and a timestamped file named after the session id", () => {
    const sessions = store();
    const session = keep(sessions.create({ cwd: "/project", name: "first" }));
    const file = session.storage.path as string;
    expect(path.dirname(file)).toBe(sessions.dir);
    expect(path.basename(file)).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z_[0-9a-f-]{36}\.jsonl$/);
    expect(path.basename(file)).toContain(session.id);
    expect(session.header.cwd).toBe("/project");
    expect(session.name).toBe("first");
    expect(sessions.pathOf(session.id)).toBe(file);
  });

  it("list summarises every session, newest first, and lists a corrupt file with an error", () => {
    const sessions = store();
    const older = keep(sessions.create({ name: "older" }));
    older.appendMessage(user("fix the bug"));
    older.appendMessage(user("and the test"));
    const newer = keep(sessions.create());
    newer.append({ type: "custom", customType: "x" });
    // A torn tail in a session someone has open must not hide it.
    fs.appendFileSync(newer.storage.path as string, '{"type":"mess');
    touch(older.storage.path as string, 100);
    touch(newer.storage.path as string, 50);
    const corrupt = path.join(sessions.dir, "2020-01-01T00-00-00.000Z_broken.jsonl");
    fs.writeFileSync(corrupt, "this is not a session\n");
    touch(corrupt, 10);
    fs.writeFileSync(path.join(sessions.dir, "notes.txt"), "ignored");

    const list = sessions.list();
    expect(list.map((summary) => summary.id)).toEqual(["broken", newer.id, older.id]);
    expect(list[0]).toMatchObject({ path: corrupt, entryCount: 0, messageCount: 0 });
    expect(list[0]?.error).toContain("line 1");
    expect(list[1]).toMatchObject({ entryCount: 1, messageCount: 0 });
    expect(list[1]?.error).toBeUndefined();
    expect(list[2]).toMatchObject({
      id: older.id,
      path: older.storage.path,
      createdAt: older.header.createdAt,
      entryCount: 3,
      messageCount: 2,
      name: "older",
      firstUserText: "fix the bug",
    });
    expect(list[2]?.modifiedAt).toBeLessThan(list[1]?.modifiedAt as number);
    // Listing read the torn file without repairing it.
    expect(fs.readFileSync(newer.storage.path as string, "utf8").endsWith('{"type":"mess')).toBe(true);
  });

  it("list of a directory that does not exist yet is empty, and so is openLatest", () => {
    const sessions = store();
    expect(sessions.list()).toEqual([]);
    expect(sessions.openLatest()).toBeUndefined();
  });

  it("open resolves a unique prefix, and rejects unknown or ambiguous ids naming the directory", () => {
    const sessions = store();
    const created = sessions.create();
    created.appendMessage(user("remember me"));
    created.close();
    const reopened = keep(sessions.open(created.id.slice(0, 6)));
    expect(reopened.id).toBe(created.id);
    expect(reopened.entries()).toHaveLength(1);
    expect(caught(() => sessions.open(created.id)).code).toBe("session_in_use");

    const unknown = caught(() => sessions.open("ffffffff-no-such"));
    expect(unknown.code).toBe("invalid_argument");
    expect(unknown.message).toContain("ffffffff-no-such");
    expect(unknown.message).toContain(sessions.dir);

    // Two files whose ids share a prefix make that prefix ambiguous.
    fs.writeFileSync(path.join(sessions.dir, "2020-01-01T00-00-00.000Z_abc1.jsonl"), "");
    fs.writeFileSync(path.join(sessions.dir, "2020-01-01T00-00-00.000Z_abc2.jsonl"), "");
    const ambiguous = caught(() => sessions.open("abc"));
    expect(ambiguous.code).toBe("invalid_argument");
    expect(ambiguous.message).toMatch(/ambiguous.*abc1, abc2|ambiguous.*abc2, abc1/);
    expect(caught(() => sessions.open("")).code).toBe("invalid_argument");
  });

  it("openLatest opens the most recently modified session, locked", () => {
    const sessions = store();
    const a = sessions.create();
    const b = sessions.create();
    a.appendMessage(user("latest work"));
    a.close();
    b.close();
    touch(b.storage.path as string, 100);
    const latest = keep(sessions.openLatest() as Session);
    expect(latest.id).toBe(a.id);
    expect(caught(() => sessions.open(a.id)).code).toBe("session_in_use");
  });

  it("fork copies the branch up to an entry with the same ids, not its siblings, and leaves the source alone", () => {
    const sessions = store();
    const source = keep(sessions.create({ cwd: "/work" }));
    const q = source.appendMessage(user("question"));
    const first = source.appendMessage(user("first try"));
    source.setLabel(q.id, "start");
    source.moveLeaf(q.id);
    const second = source.appendMessage(user("second try"));
    const after = source.appendMessage(user("after the fork point"));
    source.sync();
    const before = fs.readFileSync(source.storage.path as string);

    // The source stays open (and locked) by its owner while we fork it.
    const fork = keep(sessions.fork(source.id, second.id));
    expect(fork.id).not.toBe(source.id);
    expect(fork.header.forkedFrom).toEqual({ sessionId: source.id, entryId: second.id });
    expect(fork.header.cwd).toBe("/work");
    expect(fork.entries()).toEqual([q, second]);
    expect(fork.getEntry(first.id)).toBeUndefined();
    expect(fork.getEntry(after.id)).toBeUndefined();
    expect(fork.leafId).toBe(second.id);
    expect(fs.readFileSync(source.storage.path as string)).toEqual(before);

    // The fork is a session of its own: writable, listed, marked as a fork.
    fork.appendMessage(user("continuing the fork"));
    const summary = sessions.list().find((entry) => entry.id === fork.id);
    expect(summary).toMatchObject({
      forkedFrom: { sessionId: source.id, entryId: second.id },
      messageCount: 3,
    });
  });

  it("a fork through a label keeps the label even when its target is off the branch", () => {
    const sessions = store();
    const source = keep(sessions.create());
    const q = source.appendMessage(user("q"));
    const abandoned = source.appendMessage(user("abandoned"));
    source.moveLeaf(q.id);
    const label = source.setLabel(abandoned.id, "dead end");
    const fork = keep(sessions.fork(source.id, label.id));
    expect(fork.entries().map((entry) => entry.id)).toEqual([q.id, label.id]);
    fork.close();
    const reopened = keep(sessions.open(fork.id));
    expect(reopened.labelOf(abandoned.id)).toBe("dead end");
  });

  it("fork rejects an unknown entry or a leaf move and writes no file", () => {
    const sessions = store();
    const source = keep(sessions.create());
    const q = source.appendMessage(user("q"));
    const move = source.moveLeaf(q.id);
    const before = fs.readdirSync(sessions.dir).sort();
    expect(caught(() => sessions.fork(source.id, "nope")).code).toBe("invalid_argument");
    expect(caught(() => sessions.fork(source.id, move.id)).code).toBe("invalid_argument");
    expect(caught(() => sessions.fork("no-such-session", q.id)).code).toBe("invalid_argument");
    expect(fs.readdirSync(sessions.dir).sort()).toEqual(before);
  });
});
