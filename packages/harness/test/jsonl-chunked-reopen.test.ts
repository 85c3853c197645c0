/**
 * Reopen reads a session file in chunks of about 1 MiB (jsonl-format.ts), never
 * the whole file at once: these pin that a file spanning many chunks reloads
 * exactly what was written - multi-byte text cut by no chunk boundary, a line
 * longer than a chunk - and that the torn-tail rule cuts at the exact byte when
 * the torn write group or last line sits past the first chunk.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type AgentMessage, createSessionHeader, JsonlStorage, Session } from "../src/session/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-chunks-"));
  dirs.push(dir);
  return path.join(dir, "s.jsonl");
}
const user = (text: string, timestamp: number): AgentMessage => ({ role: "user", content: text, timestamp });

/** About 3 MiB of messages with 2-, 3- and 4-byte characters, so chunk ends fall inside them. */
function bigSession(file: string): { session: Session; written: AgentMessage[] } {
  const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
  const written: AgentMessage[] = [];
  for (let i = 0; i < 3000; i++) {
    const message = user(`${i} ${"é✓😀 mixed text ".repeat(40 + (i % 7))}`, i);
    session.appendMessage(message);
    written.push(message);
  }
  return { session, written };
}

describe("chunked reopen", () => {
  it("a file of many chunks, with multi-byte text and a line longer than a chunk, reloads exactly", () => {
    const file = tempFile();
    const { session, written } = bigSession(file);
    const huge = user(`huge ${"ü".repeat(1_500_000)}`, 99_999); // 3 MB of UTF-8 on one line
    session.appendMessage(huge);
    written.push(huge);
    session.appendMessage(user("after the huge line", 100_000));
    written.push(user("after the huge line", 100_000));
    session.close();
    expect(fs.statSync(file).size).toBeGreaterThan(5 * 2 ** 20);

    const reopened = Session.open(JsonlStorage.open(file));
    expect(reopened.warnings).toEqual([]);
    expect(reopened.buildContext().messages).toEqual(written);
    reopened.close();
  });

  it("a torn write group past the first chunk is cut at its first byte", () => {
    const file = tempFile();
    const { session } = bigSession(file);
    const anchor = session.appendMessage(user("anchor", 5000));
    const tip = session.appendMessage(user("tip", 5001));
    const before = fs.statSync(file).size;
    session.appendAll([
      { type: "leaf", targetId: anchor.id },
      { type: "branch_summary", fromId: tip.id, summary: "tried the tip" },
    ]);
    session.close();
    const after = fs.statSync(file).size;
    fs.truncateSync(file, after - 10); // the group's second line loses its end

    const reopened = Session.open(JsonlStorage.open(file));
    expect(reopened.leafId).toBe(tip.id);
    expect(reopened.warnings).toHaveLength(1);
    expect(reopened.warnings[0]).toMatch(/torn write group \(1 of 2 lines complete\)/);
    reopened.close();
    expect(fs.statSync(file).size).toBe(before);
  });

  it("a torn last line past the first chunk is cut, the lines before it kept", () => {
    const file = tempFile();
    const { session, written } = bigSession(file);
    session.close();
    const whole = fs.statSync(file).size;
    fs.appendFileSync(file, '{"type":"message","id":"torn'); // a write stopped mid-line

    const reopened = Session.open(JsonlStorage.open(file));
    expect(reopened.warnings).toEqual([`${file} line ${written.length + 2}: dropped a torn last line`]);
    expect(reopened.buildContext().messages).toEqual(written);
    reopened.close();
    expect(fs.statSync(file).size).toBe(whole);
  });
});
