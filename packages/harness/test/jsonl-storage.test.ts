import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HarnessError } from "../src/errors.js";
import {
  type AgentMessage,
  createSessionHeader,
  JsonlStorage,
  Session,
  type SessionEntry,
  type SessionHeader,
} from "../src/session/index.js";

const dirs: string[] = [];
const open: Session[] = [];
afterEach(() => {
  vi.restoreAllMocks();
  for (const session of open.splice(0)) session.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempFile(name = "s.jsonl"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-"));
  dirs.push(dir);
  return path.join(dir, name);
}
function track(session: Session): Session {
  open.push(session);
  return session;
}

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
const HEADER: SessionHeader = { type: "session", version: 1, id: "sess-1", createdAt: 1 };

function entry(id: string, parentId: string | null, extra: Record<string, unknown> = {}): SessionEntry {
  return { type: "message", id, parentId, timestamp: 1, message: user(id), ...extra } as SessionEntry;
}

/** Writes a session file line by line; each item is a value (serialised) or a raw string. */
function writeRaw(file: string, lines: unknown[]): void {
  fs.writeFileSync(
    file,
    lines.map((line) => `${typeof line === "string" ? line : JSON.stringify(line)}\n`).join(""),
  );
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

function lines(file: string): string[] {
  return fs.readFileSync(file, "utf8").split("\n");
}

describe("JsonlStorage format", () => {
  it("create writes the header as line 1 and every append as one whole line", () => {
    const file = tempFile();
    const session = track(Session.create(JsonlStorage.create(file, HEADER)));
    const a = session.appendMessage(user("line\nbreak inside"));
    const b = session.append({ type: "custom", customType: "x", data: { nested: [1, 2] } });
    session.sync();
    const text = lines(file);
    expect(text).toHaveLength(4); // header, a, b, and "" after the final newline
    expect(text[3]).toBe("");
    expect(JSON.parse(text[0] as string)).toEqual(HEADER);
    expect(JSON.parse(text[1] as string)).toEqual(a);
    expect(JSON.parse(text[2] as string)).toEqual(b);
  });

  it("create refuses an existing file and leaves it untouched", () => {
    const file = tempFile();
    fs.writeFileSync(file, "precious");
    expect(() => JsonlStorage.create(file, HEADER)).toThrow(expect.objectContaining({ code: "session" }));
    expect(fs.readFileSync(file, "utf8")).toBe("precious");
    expect(fs.existsSync(`${file}.lock`)).toBe(false);
  });

  it("opening a missing file fails and creates neither the file nor a lock", () => {
    const file = tempFile();
    expect(() => JsonlStorage.open(file)).toThrow(expect.objectContaining({ code: "session" }));
    expect(() => JsonlStorage.open(file, { readOnly: true })).toThrow(
      expect.objectContaining({ code: "session" }),
    );
    expect(fs.readdirSync(path.dirname(file))).toEqual([]);
  });

  it("a header-only file opens as an empty session", () => {
    const file = tempFile();
    writeRaw(file, [HEADER]);
    const session = track(Session.open(JsonlStorage.open(file)));
    expect(session.id).toBe("sess-1");
    expect(session.leafId).toBeNull();
    expect(session.entries()).toEqual([]);
    expect(session.warnings).toEqual([]);
  });

  it("a read-only storage refuses to append and takes no lock", () => {
    const file = tempFile();
    writeRaw(file, [HEADER, entry("a", null)]);
    const reader = track(Session.open(JsonlStorage.open(file, { readOnly: true })));
    expect(() => reader.appendMessage(user("x"))).toThrow(expect.objectContaining({ code: "session" }));
    expect(reader.entries()).toHaveLength(1);
    const writer = track(Session.open(JsonlStorage.open(file)));
    writer.appendMessage(user("y"));
    expect(lines(file)).toHaveLength(4);
  });
});

describe("torn last line", () => {
  function tornFile(): { file: string; goodBytes: Buffer; torn: string } {
    const file = tempFile();
    writeRaw(file, [HEADER, entry("a", null), entry("b", "a"), entry("c", "b")]);
    const goodBytes = fs.readFileSync(file);
    const torn = JSON.stringify(entry("d", "c")).slice(0, 30); // half an entry, no newline
    fs.appendFileSync(file, torn);
    return { file, goodBytes, torn };
  }

  it("a torn last line is truncated on open and the next append starts on its own line", () => {
    const { file, goodBytes } = tornFile();
    const session = Session.open(JsonlStorage.open(file));
    expect(session.warnings).toHaveLength(1);
    expect(session.warnings[0]).toContain("line 5");
    expect(fs.readFileSync(file)).toEqual(goodBytes);
    expect(session.leafId).toBe("c");
    const d = session.appendMessage(user("after the tear"));
    session.close();

    const text = lines(file);
    expect(text).toHaveLength(6);
    expect(JSON.parse(text[4] as string)).toEqual(d);
    const again = track(Session.open(JsonlStorage.open(file)));
    expect(again.warnings).toEqual([]);
    expect(again.entries().map((e) => e.id)).toEqual(["a", "b", "c", d.id]);
  });

  it("a complete last line that is not JSON is corruption, refused, and the file is left as it was", () => {
    const file = tempFile();
    writeRaw(file, [HEADER, entry("a", null), '{"type":"message","id":"b"']);
    const before = fs.readFileSync(file);
    const error = caught(() => Session.open(JsonlStorage.open(file)));
    expect(error).toMatchObject({ code: "session", file });
    expect(error.message).toContain("line 3");
    expect(fs.readFileSync(file)).toEqual(before);
  });

  it("a read-only open ignores a torn last line and leaves the file byte for byte", () => {
    const { file, goodBytes, torn } = tornFile();
    const before = fs.readFileSync(file);
    const session = track(Session.open(JsonlStorage.open(file, { readOnly: true })));
    expect(session.warnings).toHaveLength(1);
    expect(session.entries().map((e) => e.id)).toEqual(["a", "b", "c"]);
    expect(fs.readFileSync(file)).toEqual(before);
    expect(before.length).toBe(goodBytes.length + torn.length);
  });
});

describe("malformed files", () => {
  const a = entry("a", null);
  const cases: Array<[string, unknown[], number, RegExp]> = [
    ["bad JSON in the middle", [HEADER, a, "{not json", entry("b", "a")], 3, /JSON/],
    ["a parent that does not exist", [HEADER, a, entry("b", "zzz")], 3, /parentId/],
    ["a parent that appears later", [HEADER, entry("b", "a"), a], 2, /parentId/],
    [
      "a parent that is a leaf move",
      [HEADER, a, { type: "leaf", id: "m", parentId: "a", targetId: "a", timestamp: 1 }, entry("b", "m")],
      4,
      /parentId/,
    ],
    ["a duplicate id", [HEADER, a, entry("b", "a"), entry("a", "b")], 4, /duplicate/],
    [
      "a leaf targeting an unknown entry",
      [HEADER, a, { type: "leaf", id: "l", parentId: "a", targetId: "x", timestamp: 1 }],
      3,
      /targetId/,
    ],
    ["an unknown type", [HEADER, a, { type: "mystery", id: "b", parentId: "a", timestamp: 1 }], 3, /type/],
    [
      "an entry without an id",
      [HEADER, { type: "custom", customType: "x", parentId: null, timestamp: 1 }],
      2,
      /"id"/,
    ],
    [
      "a field of the wrong type",
      [HEADER, a, { type: "model_change", id: "b", parentId: "a", timestamp: 1, provider: 7, modelId: "m" }],
      3,
      /provider/,
    ],
    [
      "a message without a role",
      [HEADER, a, { type: "message", id: "b", parentId: "a", timestamp: 1, message: {} }],
      3,
      /role/,
    ],
    ["a line that is not an object", [HEADER, a, "42", entry("b", "a")], 3, /object/],
    ["a header of another type", [{ type: "entry", id: "x" }, a], 1, /session/],
    ["a header of a future version", [{ ...HEADER, version: 2 }, a], 1, /version/],
    ["a header without an id", [{ type: "session", version: 1, createdAt: 1 }], 1, /"id"/],
  ];
  for (const [what, content, line, expected] of cases) {
    it(`${what} is a session error naming the file and line ${line}`, () => {
      const file = tempFile();
      writeRaw(file, content);
      const before = fs.readFileSync(file);
      for (const readOnly of [false, true]) {
        let error: unknown;
        try {
          Session.open(JsonlStorage.open(file, { readOnly }));
        } catch (caught) {
          error = caught;
        }
        expect(error).toBeInstanceOf(HarnessError);
        expect((error as HarnessError).code).toBe("session");
        expect((error as HarnessError).message).toContain(`${file} line ${line}:`);
        expect((error as HarnessError).message).toMatch(expected);
      }
      // The failed writable open released its lock and did not touch the file.
      expect(fs.existsSync(`${file}.lock`)).toBe(false);
      expect(fs.readFileSync(file)).toEqual(before);
    });
  }

  it("an empty file or a header without a newline is a session error, not a torn tail", () => {
    const file = tempFile();
    fs.writeFileSync(file, "");
    expect(() => Session.open(JsonlStorage.open(file))).toThrow(/line 1: the file is empty/);
    fs.writeFileSync(file, JSON.stringify(HEADER));
    expect(() => Session.open(JsonlStorage.open(file))).toThrow(/line 1: the header line is incomplete/);
    expect(fs.readFileSync(file, "utf8")).toBe(JSON.stringify(HEADER));
  });

  it("any single-byte corruption either loads or fails with a HarnessError, never a TypeError", () => {
    const file = tempFile();
    const source = track(
      Session.create(JsonlStorage.create(tempFile("source.jsonl"), createSessionHeader())),
    );
    source.append({ type: "model_change", provider: "p", modelId: "m" });
    source.appendMessage(user("hello"));
    source.append({ type: "compaction", summary: "s", firstKeptEntryId: "x", tokensBefore: 3 });
    source.moveLeaf(source.entries()[0]?.id as string);
    source.setLabel(source.entries()[1]?.id as string, "l");
    const good = fs.readFileSync(source.storage.path as string);
    const replacements = ['"', "{", "}", "[", "]", ",", ":", "0", "n", " ", "\n", "x"];
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const outcomes = { loaded: 0, rejected: 0 };
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.from(good);
      bytes[random(bytes.length)] = (replacements[random(replacements.length)] as string).charCodeAt(0);
      fs.writeFileSync(file, bytes);
      try {
        Session.open(JsonlStorage.open(file, { readOnly: true })).buildContext();
        outcomes.loaded++;
      } catch (error) {
        expect(error).toBeInstanceOf(HarnessError);
        outcomes.rejected++;
      }
    }
    expect(outcomes.rejected).toBeGreaterThan(0);
  });
});

describe("write failures", () => {
  const enospc = () => Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });

  it("an append that fails mid-write is cut back, throws a session error, and the next append works", () => {
    const file = tempFile();
    const session = track(Session.create(JsonlStorage.create(file, HEADER)));
    const a = session.appendMessage(user("a"));
    const bytesBefore = fs.readFileSync(file);
    const context = session.buildContext();
    const realWrite = fs.writeSync;
    // Half the line reaches the disk, then the disk is full.
    vi.spyOn(fs, "writeSync").mockImplementationOnce(((
      fd: number,
      buffer: Buffer,
      offset: number,
      length: number,
    ) => {
      realWrite(fd, buffer, offset, Math.floor(length / 2));
      throw enospc();
    }) as unknown as typeof fs.writeSync);

    let error: unknown;
    try {
      session.appendMessage(user("b"));
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: "session", file });
    expect((error as Error).cause).toMatchObject({ code: "ENOSPC" });
    expect(fs.readFileSync(file)).toEqual(bytesBefore);
    expect(session.entries()).toEqual([a]);
    expect(session.leafId).toBe(a.id);
    expect(session.buildContext()).toEqual(context);

    const c = session.appendMessage(user("c"));
    session.sync();
    const reader = track(Session.open(JsonlStorage.open(file, { readOnly: true })));
    expect(reader.warnings).toEqual([]);
    expect(reader.entries()).toEqual([a, c]);
    expect(c.parentId).toBe(a.id);
  });

  it("a short write is continued until the whole line is written", () => {
    const file = tempFile();
    const session = track(Session.create(JsonlStorage.create(file, HEADER)));
    const realWrite = fs.writeSync;
    vi.spyOn(fs, "writeSync").mockImplementationOnce(((
      fd: number,
      buffer: Buffer,
      offset: number,
      length: number,
    ) => realWrite(fd, buffer, offset, Math.min(length, 5))) as typeof fs.writeSync);
    const a = session.appendMessage(user("written in two pieces"));
    const reader = track(Session.open(JsonlStorage.open(file, { readOnly: true })));
    expect(reader.entries()).toEqual([a]);
  });

  it("a session file deleted while open makes sync fail and is never recreated", () => {
    const file = tempFile();
    const session = track(Session.create(JsonlStorage.create(file, HEADER)));
    session.appendMessage(user("a"));
    session.sync();
    fs.unlinkSync(file);
    expect(() => session.sync()).toThrow(expect.objectContaining({ code: "session" }));
    expect(() => session.sync()).toThrow(/deleted or replaced/);
    session.appendMessage(user("into the void"));
    expect(() => session.sync()).toThrow(/deleted or replaced/);
    session.close();
    expect(fs.existsSync(file)).toBe(false);
  });

  it("a session file replaced while open makes sync fail and the replacement is left alone", () => {
    const file = tempFile();
    const session = track(Session.create(JsonlStorage.create(file, HEADER)));
    session.appendMessage(user("a"));
    const impostor = `${file}.new`;
    writeRaw(impostor, [{ ...HEADER, id: "other" }]);
    fs.renameSync(impostor, file);
    const replacement = fs.readFileSync(file);
    expect(() => session.sync()).toThrow(/deleted or replaced/);
    expect(fs.readFileSync(file)).toEqual(replacement);
  });

  it("operations on a closed storage are session errors and close is idempotent", () => {
    const file = tempFile();
    const session = Session.create(JsonlStorage.create(file, HEADER));
    session.close();
    session.close();
    expect(() => session.appendMessage(user("late"))).toThrow(expect.objectContaining({ code: "session" }));
    expect(() => session.sync()).toThrow(expect.objectContaining({ code: "session" }));
    expect(session.entries()).toEqual([]);
  });
});

describe("scale", () => {
  it("opens a 100,000-entry session with every entry and the leaf restored", () => {
    const file = tempFile();
    const parts = [`${JSON.stringify(HEADER)}\n`];
    let parent: string | null = null;
    for (let i = 0; i < 100_000; i++) {
      const id = i.toString(16).padStart(8, "0");
      parts.push(
        `${JSON.stringify(entry(id, parent, { message: user(`message number ${i} with some text`) }))}\n`,
      );
      parent = id;
    }
    fs.writeFileSync(file, parts.join(""));
    const session = track(Session.open(JsonlStorage.open(file)));
    expect(session.entries()).toHaveLength(100_000);
    expect(session.leafId).toBe(parent);
    // Speed is a benchmark concern (bench/), not a timed test.
  });
});
