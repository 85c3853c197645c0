import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HarnessError } from "../src/errors.js";
import { BranchContext } from "../src/session/context.js";
import {
  type AgentMessage,
  BRANCH_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_PREFIX,
  createSessionHeader,
  JsonlStorage,
  MemoryStorage,
  Session,
  type SessionContext,
} from "../src/session/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-"));
  dirs.push(dir);
  return dir;
}

const user = (text: string, timestamp = 1): AgentMessage => ({ role: "user", content: text, timestamp });
const assistant = (text: string): AgentMessage => ({
  role: "assistant",
  content: [{ type: "text", text }],
  api: "faux",
  provider: "faux",
  model: "faux-1",
  usage: {
    input: 1,
    output: 1,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 2,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  },
  stopReason: "stop",
  timestamp: 2,
});

/** The text of each context message, for compact assertions. */
function texts(context: SessionContext): string[] {
  return context.messages.map((message) => {
    const { content } = message;
    if (typeof content === "string") return content;
    return content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
  });
}

interface Fixture {
  session: Session;
  /** Closes `current` (default: the first session) and loads it again from what its storage holds. */
  reopen(current?: Session): Session;
}

const kinds: Record<"memory" | "jsonl", () => Fixture> = {
  memory: () => {
    const session = Session.create(new MemoryStorage());
    return {
      session,
      reopen(current = session) {
        current.close();
        const loaded = current.storage.load();
        return Session.open(new MemoryStorage(loaded.header, loaded.entries));
      },
    };
  },
  jsonl: () => {
    const file = path.join(tempDir(), "s.jsonl");
    const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
    return {
      session,
      reopen(current = session) {
        current.close();
        return Session.open(JsonlStorage.open(current.storage.path as string));
      },
    };
  },
};

for (const [kind, make] of Object.entries(kinds)) {
  describe(`Session over ${kind} storage`, () => {
    it("append and reopen restore every entry, their order and the leaf", () => {
      const { session, reopen } = make();
      const a = session.appendMessage(user("hello"));
      const b = session.appendMessage(assistant("hi"));
      const c = session.append({ type: "model_change", provider: "p", modelId: "m", timestamp: 42 });
      expect(a.parentId).toBeNull();
      expect(b.parentId).toBe(a.id);
      expect(c.parentId).toBe(b.id);
      expect(c.timestamp).toBe(42);
      expect(a.id).toMatch(/^[0-9a-f]{8}$/);
      expect(session.leafId).toBe(c.id);

      const again = reopen();
      expect(again.id).toBe(session.id);
      expect(again.entries()).toEqual([a, b, c]);
      expect(again.leafId).toBe(c.id);
      again.close();
    });

    it("a leaf moved back survives reopening, and the next append becomes a sibling", () => {
      const { session, reopen } = make();
      const a = session.appendMessage(user("q"));
      const b = session.appendMessage(assistant("first answer"));
      const move = session.moveLeaf(a.id);
      expect(move.type).toBe("leaf");
      expect(move.parentId).toBe(b.id); // the leaf it moved away from
      expect(session.leafId).toBe(a.id);

      let again = reopen();
      expect(again.leafId).toBe(a.id);
      const c = again.appendMessage(assistant("second answer"));
      expect(c.parentId).toBe(a.id);
      expect(again.children(a.id).map((entry) => entry.id)).toEqual([b.id, c.id]);
      expect(again.branch().map((entry) => entry.id)).toEqual([a.id, c.id]);
      expect(again.branch(b.id).map((entry) => entry.id)).toEqual([a.id, b.id]);

      // Leaf entries are records, not nodes: they are never children or on a branch.
      expect(again.children(b.id)).toEqual([]);
      expect(() => again.moveLeaf(move.id)).toThrow(/leaf move/);

      again = reopen(again);
      expect(again.leafId).toBe(c.id);
      expect(again.children(a.id).map((entry) => entry.id)).toEqual([b.id, c.id]);
      again.close();
    });

    it("moving the leaf to null empties the branch and the next append is a second root", () => {
      const { session, reopen } = make();
      const a = session.appendMessage(user("one"));
      session.moveLeaf(null);
      expect(session.leafId).toBeNull();
      expect(session.buildContext().messages).toEqual([]);
      const b = session.appendMessage(user("two"));
      expect(b.parentId).toBeNull();
      const again = reopen();
      expect(again.children(null).map((entry) => entry.id)).toEqual([a.id, b.id]);
      expect(texts(again.buildContext())).toEqual(["two"]);
      again.close();
    });

    it("labels are set, replaced and removed, survive reopening, and are tree nodes", () => {
      const { session, reopen } = make();
      const a = session.appendMessage(user("q"));
      const label = session.setLabel(a.id, "start");
      expect(label.parentId).toBe(a.id);
      expect(session.leafId).toBe(label.id);
      expect(session.labelOf(a.id)).toBe("start");
      session.setLabel(a.id, "beginning");
      const b = session.appendMessage(assistant("x"));
      session.setLabel(b.id, "answer");
      session.setLabel(b.id, null);
      expect(() => session.setLabel("nope", "x")).toThrow(HarnessError);

      const again = reopen();
      expect(again.labelOf(a.id)).toBe("beginning");
      expect(again.labelOf(b.id)).toBeUndefined();
      expect(texts(again.buildContext())).toEqual(["q", "x"]);
      again.close();
    });

    it("append rejects leaf entries and malformed input, writing nothing", () => {
      const { session, reopen } = make();
      const a = session.appendMessage(user("q"));
      const attempts: Array<() => unknown> = [
        () => session.append({ type: "leaf", targetId: a.id }),
        () => session.append({ type: "thinking_level_change", thinkingLevel: "loud" as never }),
        () => session.append({ type: "model_change", provider: "p" } as never),
        () => session.append({ type: "message", message: { role: "robot" } as never }),
        () => session.append({ type: "custom", customType: "x", timestamp: Number.NaN }),
        () => session.moveLeaf("missing"),
      ];
      for (const attempt of attempts) {
        expect(attempt).toThrow(expect.objectContaining({ code: "invalid_argument" }));
      }
      // An input carrying its own id or parentId gets fresh ones.
      const copied = session.append({ ...a, id: a.id, parentId: "elsewhere" } as never);
      expect(copied.id).not.toBe(a.id);
      expect(copied.parentId).toBe(a.id);
      expect(session.entries()).toHaveLength(2);
      const again = reopen();
      expect(again.entries().map((entry) => entry.id)).toEqual([a.id, copied.id]);
      again.close();
    });

    it("buildContext projects only the active branch: messages, custom messages and branch summaries", () => {
      const { session } = make();
      const q = session.appendMessage(user("question"));
      session.appendMessage(assistant("abandoned"));
      session.moveLeaf(q.id);
      session.append({
        type: "branch_summary",
        fromId: "whatever",
        summary: "tried X, failed",
        timestamp: 7,
      });
      session.append({ type: "custom", customType: "bookkeeping", data: { n: 1 } });
      session.append({ type: "custom_message", customType: "note", content: "remember Y", display: false });
      session.append({ type: "session_info", name: "demo" });
      session.appendMessage(assistant("answer"));

      const context = session.buildContext();
      expect(texts(context)).toEqual([
        "question",
        `${BRANCH_SUMMARY_PREFIX}<branch_summary>\ntried X, failed\n</branch_summary>`,
        "remember Y",
        "answer",
      ]);
      expect(context.messages[1]).toMatchObject({ role: "user", timestamp: 7 });
      expect(context.messages[2]).toMatchObject({ role: "user", content: "remember Y" });
      expect(context.model).toBeUndefined();
      expect(session.name).toBe("demo");
    });

    it("buildContext applies the latest compaction: summary, then the kept tail, then later entries", () => {
      const { session, reopen } = make();
      session.append({ type: "model_change", provider: "anthropic", modelId: "old" });
      session.append({ type: "thinking_level_change", thinkingLevel: "high" });
      session.append({ type: "active_tools_change", activeTools: ["read", "bash"] });
      session.appendMessage(user("one"));
      session.appendMessage(assistant("two"));
      const first = session.append({
        type: "compaction",
        summary: "S1",
        firstKeptEntryId: "none",
        tokensBefore: 10,
      });
      const kept = session.appendMessage(user("three"));
      session.appendMessage(assistant("four"));
      session.appendMessage(user("five"));
      const second = session.append({
        type: "compaction",
        summary: "S2",
        firstKeptEntryId: kept.id,
        tokensBefore: 20,
        timestamp: 99,
      });
      session.appendMessage(assistant("six"));
      expect(first.type).toBe("compaction");

      const expected = [
        `${COMPACTION_SUMMARY_PREFIX}<summary>\nS2\n</summary>`,
        "three",
        "four",
        "five",
        "six",
      ];
      const context = session.buildContext();
      expect(texts(context)).toEqual(expected);
      expect(context.messages[0]).toMatchObject({ role: "user", timestamp: 99 });
      expect(context.model).toEqual({ provider: "anthropic", modelId: "old" });
      expect(context.thinkingLevel).toBe("high");
      expect(context.activeTools).toEqual(["read", "bash"]);
      // Before the second compaction, the first one applies and keeps nothing older.
      expect(texts(session.buildContext(second.parentId))).toEqual([
        `${COMPACTION_SUMMARY_PREFIX}<summary>\nS1\n</summary>`,
        "three",
        "four",
        "five",
      ]);

      const again = reopen();
      expect(texts(again.buildContext())).toEqual(expected);
      again.close();
    });

    it("buildContext reports the latest settings on the branch, not those of a sibling branch", () => {
      const { session } = make();
      const root = session.append({ type: "model_change", provider: "a", modelId: "1" });
      session.append({ type: "model_change", provider: "b", modelId: "2" });
      session.append({ type: "thinking_level_change", thinkingLevel: "low" });
      session.append({ type: "active_tools_change", activeTools: [] });
      expect(session.buildContext()).toEqual({
        messages: [],
        model: { provider: "b", modelId: "2" },
        thinkingLevel: "low",
        activeTools: [],
      });
      session.moveLeaf(root.id);
      expect(session.buildContext()).toEqual({ messages: [], model: { provider: "a", modelId: "1" } });
    });

    it("buildContext returns copies: mutating one does not change the next", () => {
      const { session } = make();
      session.append({ type: "active_tools_change", activeTools: ["read"] });
      session.appendMessage(user("q"));
      const first = session.buildContext();
      first.messages.push(user("injected"));
      first.activeTools?.push("bash");
      const second = session.buildContext();
      expect(texts(second)).toEqual(["q"]);
      expect(second.activeTools).toEqual(["read"]);
    });

    it("building another leaf's context does not disturb the active one", () => {
      const { session } = make();
      const a = session.appendMessage(user("a"));
      session.appendMessage(assistant("b"));
      expect(texts(session.buildContext())).toEqual(["a", "b"]);
      expect(texts(session.buildContext(a.id))).toEqual(["a"]);
      session.appendMessage(user("c"));
      expect(texts(session.buildContext())).toEqual(["a", "b", "c"]);
      expect(session.buildContext(null).messages).toEqual([]);
      expect(() => session.buildContext("missing")).toThrow(
        expect.objectContaining({ code: "invalid_argument" }),
      );
    });
  });
}

describe("Session lifecycle", () => {
  it("Session.create refuses storage that already holds entries", () => {
    const seed = Session.create(new MemoryStorage());
    seed.appendMessage(user("x"));
    const loaded = seed.storage.load();
    expect(() => Session.create(new MemoryStorage(loaded.header, loaded.entries))).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });

  it("Session.open rejects a storage whose entries do not form a tree, and closes it", () => {
    const header = createSessionHeader();
    const orphan = {
      type: "custom",
      customType: "x",
      id: "aaaaaaaa",
      parentId: "gone",
      timestamp: 1,
    } as const;
    const storage = new MemoryStorage(header, [orphan]);
    expect(() => Session.open(storage)).toThrow(expect.objectContaining({ code: "session" }));
    expect(() => storage.append(orphan)).toThrow(/closed/);
  });

  it("a storage append failure propagates and leaves the session unchanged", () => {
    const storage = new MemoryStorage();
    const session = Session.create(storage);
    const a = session.appendMessage(user("a"));
    const context = session.buildContext();
    const failing = Object.assign(Object.create(storage), {
      append() {
        throw new Error("disk on fire");
      },
    });
    Object.defineProperty(session, "storage", { value: failing });
    expect(() => session.appendMessage(user("b"))).toThrow("disk on fire");
    expect(() => session.moveLeaf(null)).toThrow("disk on fire");
    expect(session.entries()).toEqual([a]);
    expect(session.leafId).toBe(a.id);
    expect(session.buildContext()).toEqual(context);
  });
});

describe("incremental context", () => {
  it("after 5,000 mixed appends the cached context equals a rebuild from the file at every checkpoint", () => {
    const file = path.join(tempDir(), "long.jsonl");
    const session = Session.create(JsonlStorage.create(file, createSessionHeader()));
    const ids: string[] = [];
    const checkpoints = new Set([1, 2, 777, 1500, 2600, 3333, 4999, 5000]);
    for (let i = 1; i <= 5000; i++) {
      let id: string;
      if (i % 997 === 0) {
        // A compaction keeping roughly the last 50 entries of the branch.
        const branch = session.branch();
        const kept = branch[Math.max(0, branch.length - 50)]?.id ?? "none";
        id = session.append({
          type: "compaction",
          summary: `summary ${i}`,
          firstKeptEntryId: kept,
          tokensBefore: i,
        }).id;
      } else if (i % 401 === 0 && ids.length > 10) {
        session.moveLeaf(ids[ids.length - 7] as string);
        id = session.append({
          type: "branch_summary",
          fromId: ids.at(-1) as string,
          summary: `branch ${i}`,
        }).id;
      } else if (i % 53 === 0) {
        id = session.append({ type: "model_change", provider: "p", modelId: `m${i}` }).id;
      } else if (i % 31 === 0) {
        id = session.append({
          type: "custom_message",
          customType: "c",
          content: `custom ${i}`,
          display: true,
        }).id;
      } else if (i % 17 === 0) {
        id = session.append({ type: "label", targetId: ids.at(-1) as string, label: `l${i}` }).id;
      } else {
        id = session.appendMessage(i % 2 ? user(`u${i}`) : assistant(`a${i}`)).id;
      }
      ids.push(id);
      const context = session.buildContext();
      expect(context.messages.length).toBeGreaterThan(0);
      if (checkpoints.has(i)) {
        const fresh = Session.open(JsonlStorage.open(file, { readOnly: true }));
        expect(fresh.leafId).toBe(session.leafId);
        expect(context).toEqual(fresh.buildContext());
        fresh.close();
      }
    }
    // Compactions kept the context short: far fewer messages than entries.
    expect(session.buildContext().messages.length).toBeLessThan(500);
    session.close();
  });

  it("buildContext after each of 20,000 appends extends the cached context instead of walking the branch", () => {
    const session = Session.create(new MemoryStorage());
    const rebuilds = vi.spyOn(BranchContext, "build");
    for (let i = 0; i < 20_000; i++) {
      if (i % 200 === 0) session.appendMessage(user(`u${i}`));
      else session.append({ type: "custom", customType: "tick" });
      session.buildContext();
    }
    expect(session.buildContext().messages).toHaveLength(100);
    // One build for the first call; every later append extends the cache in O(1).
    expect(rebuilds.mock.calls.length).toBeLessThanOrEqual(1);
    rebuilds.mockRestore();
  });
});
