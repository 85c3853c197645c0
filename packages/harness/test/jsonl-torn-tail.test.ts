/**
 * The torn-tail rule and write groups: only what one interrupted write can leave -
 * a last line without its newline, or the whole lines of an unfinished write group -
 * is cut off at open; everything else that is wrong is refused with a `session` error
 * naming file and line. Several entries written by `Session.appendAll` (tree
 * navigation's leaf move and branch summary) load all together or not at all, whatever
 * byte a crash stops at.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessError } from "../src/errors.js";
import {
  type AgentMessage,
  createSessionHeader,
  JsonlStorage,
  MemoryStorage,
  Session,
} from "../src/session/index.js";
import { fixture } from "./support/harness-fixture.js";
import { reply } from "./support/scripted-model.js";

const dirs: string[] = [];
const open: Session[] = [];
afterEach(() => {
  for (const session of open.splice(0)) session.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
const track = (session: Session) => {
  open.push(session);
  return session;
};
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-torn-"));
  dirs.push(dir);
  return path.join(dir, "s.jsonl");
}
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

function caught(action: () => unknown): HarnessError {
  try {
    action();
  } catch (error) {
    if (error instanceof HarnessError) return error;
    throw error;
  }
  throw new Error("expected a HarnessError, but nothing was thrown");
}

/** A session file with three messages and a queue push and a pending write at the end. */
function sessionFile(): string {
  const file = tempFile();
  const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
  session.appendMessage(user("one"));
  session.appendMessage(user("two"));
  session.appendJournal({ event: "queue_push", queue: "steer", queueId: "q1", message: user("queued") });
  session.appendJournal({
    event: "pending_write",
    pendingId: "p1",
    input: { type: "custom", customType: "x" },
  });
  session.close();
  return file;
}

describe("torn-tail rule", () => {
  it("the newline between the last two lines turned into a space is refused, and no entry is lost", () => {
    const file = sessionFile();
    const text = fs.readFileSync(file, "utf8");
    const cut = text.lastIndexOf("\n", text.length - 2);
    fs.writeFileSync(file, `${text.slice(0, cut)} ${text.slice(cut + 1)}`);
    const before = fs.readFileSync(file);
    const error = caught(() => Session.open(JsonlStorage.open(file)));
    expect(error).toMatchObject({ code: "session", file });
    expect(error.message).toMatch(/line 4: expected one JSON entry per line/);
    expect(fs.readFileSync(file)).toEqual(before); // nothing cut
  });

  it("a bad line in the middle is refused, not dropped", () => {
    const file = sessionFile();
    const parts = fs.readFileSync(file, "utf8").split("\n");
    parts.splice(2, 0, "{not json");
    fs.writeFileSync(file, parts.join("\n"));
    expect(caught(() => Session.open(JsonlStorage.open(file))).message).toContain("line 3");
  });

  it("a last line without its newline is torn: cut off with a warning naming the line, even when it is valid JSON", () => {
    const file = sessionFile();
    const text = fs.readFileSync(file, "utf8");
    fs.writeFileSync(file, text.slice(0, -1)); // the pending write, complete but for its newline
    const session = track(Session.open(JsonlStorage.open(file)));
    expect(session.warnings).toEqual([`${file} line 5: dropped a torn last line`]);
    expect(session.journal().map((record) => record.event)).toEqual(["queue_push"]);
  });
});

describe("write groups (Session.appendAll)", () => {
  /** A file whose last write is a group of a leaf move and a branch summary; returns the group's byte range. */
  function groupFile() {
    const file = tempFile();
    const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
    const a = session.appendMessage(user("a"));
    const b = session.appendMessage(user("b"));
    const before = fs.statSync(file).size;
    const [leaf, summary] = session.appendAll([
      { type: "leaf", targetId: a.id },
      { type: "branch_summary", fromId: b.id, summary: "tried b" },
    ]);
    session.close();
    return { file, a, b, leaf, summary, start: before, end: fs.statSync(file).size };
  }

  it("writes one line per entry, each marked with the group, and reloads them as plain entries", () => {
    const { file, a, leaf, summary } = groupFile();
    const written = fs
      .readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .slice(-2)
      .map((line) => JSON.parse(line));
    expect(written.map((line) => line.writeGroup.of)).toEqual([2, 2]);
    expect(written[0].writeGroup.id).toBe(written[1].writeGroup.id);
    const session = track(Session.open(JsonlStorage.open(file)));
    expect(session.leafId).toBe(summary?.id);
    expect(summary).toMatchObject({ parentId: a.id, type: "branch_summary" });
    expect(leaf).toMatchObject({ type: "leaf", targetId: a.id });
    expect(session.entries().some((entry) => "writeGroup" in entry)).toBe(false);
    expect(session.warnings).toEqual([]);
  });

  it("a crash at any byte of the group loads all of it or none of it, and the repair sticks", () => {
    const { file, b, summary, start, end } = groupFile();
    const full = fs.readFileSync(file);
    for (let cut = start; cut <= end; cut++) {
      fs.writeFileSync(file, full.subarray(0, cut));
      const session = Session.open(JsonlStorage.open(file));
      const ids = session.entries().map((entry) => entry.id);
      if (cut === end) {
        expect(session.leafId).toBe(summary?.id);
        expect(session.warnings).toEqual([]);
      } else {
        expect(session.leafId).toBe(b.id); // the leaf never moved without its summary
        expect(ids).not.toContain(summary?.id);
        if (cut > start)
          expect(session.warnings[0]).toMatch(/line 4: dropped a torn (write group|last line)/);
        session.appendMessage(user("after"));
      }
      session.close();
      expect(Session.open(JsonlStorage.open(file, { readOnly: true })).warnings).toEqual([]);
    }
  });

  it("a group broken in the middle, or a group line followed by a line outside it, is refused", () => {
    const { file } = groupFile();
    const parts = fs.readFileSync(file, "utf8").trim().split("\n");
    const extra = JSON.stringify({ type: "custom", id: "zz", parentId: null, timestamp: 1, customType: "x" });
    for (const broken of [
      [...parts.slice(0, -1), extra], // the group's second line replaced
      [...parts.slice(0, -2), parts.at(-1), parts.at(-2)], // swapped
    ]) {
      fs.writeFileSync(file, `${broken.join("\n")}\n`);
      const error = caught(() => Session.open(JsonlStorage.open(file)));
      expect(error).toMatchObject({ code: "session", file });
      expect(error.message).toMatch(/line \d+: /);
    }
  });

  it("a group that does not validate writes nothing; writeGroup is reserved", () => {
    const file = tempFile();
    const session = track(Session.create(JsonlStorage.create(file, createSessionHeader())));
    const a = session.appendMessage(user("a"));
    const size = fs.statSync(file).size;
    expect(
      caught(() =>
        session.appendAll([
          { type: "leaf", targetId: a.id },
          { type: "label", targetId: a.id, label: 5 as unknown as string },
        ]),
      ).code,
    ).toBe("invalid_argument");
    expect(
      caught(() => session.append({ type: "custom", customType: "x", writeGroup: 1 } as never)).code,
    ).toBe("invalid_argument");
    expect(fs.statSync(file).size).toBe(size);
    expect(session.leafId).toBe(a.id);
  });

  it("memory storage keeps a group whole too", () => {
    const session = Session.create(new MemoryStorage());
    const a = session.appendMessage(user("a"));
    const [, summary] = session.appendAll([
      { type: "leaf", targetId: null },
      { type: "branch_summary", fromId: a.id, summary: "s" },
    ]);
    expect(summary?.parentId).toBeNull();
    const reopened = Session.open(session.storage);
    expect(reopened.leafId).toBe(summary?.id);
  });
});

describe("tree navigation with a summary is one write", () => {
  it("a crash at any byte of navigateTree's writes leaves the leaf where it was, or moved with its summary", async () => {
    const file = tempFile();
    const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
    const t = fixture({ session });
    t.scripted.script([reply("first"), reply("second")]);
    await t.harness.prompt("q1");
    const firstAnswer = session.leafId as string;
    await t.harness.prompt("q2");
    const from = session.leafId;
    session.sync();
    const start = fs.statSync(file).size;
    const outcome = await t.harness.navigateTree(firstAnswer, { summary: "asked q2" });
    session.close();
    t.scripted.dispose();
    const full = fs.readFileSync(file);
    expect(full.length).toBeGreaterThan(start);
    for (let cut = start; cut <= full.length; cut++) {
      fs.writeFileSync(file, full.subarray(0, cut));
      const reopened = Session.open(JsonlStorage.open(file, { readOnly: true }));
      if (cut === full.length) {
        expect(reopened.leafId).toBe(outcome.summaryEntryId);
        expect(reopened.getEntry(outcome.summaryEntryId as string)).toMatchObject({ parentId: firstAnswer });
      } else {
        expect(reopened.leafId).toBe(from);
      }
      reopened.close();
    }
  });
});
