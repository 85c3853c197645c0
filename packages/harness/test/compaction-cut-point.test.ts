import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { branchInContext, entryTokens, findCutPoint, isCutPoint } from "../src/compaction/cut-point.js";
import {
  estimateContextTokens,
  estimateMessageTokens,
  estimateTextTokens,
} from "../src/compaction/token-estimate.js";
import type { AgentMessage, SessionEntry } from "../src/session/entries.js";
import { MemoryStorage } from "../src/session/memory-storage.js";
import { Session } from "../src/session/session.js";

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });
const call = (id: string, text: string): AgentMessage =>
  fauxAssistantMessage([fauxToolCall("echo", { text }, { id })], { stopReason: "toolUse" });
const result = (id: string, text: string): AgentMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "echo",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 0,
});
const answer = (text: string): AgentMessage => fauxAssistantMessage(text);

function branchOf(messages: AgentMessage[]): SessionEntry[] {
  const session = Session.create(new MemoryStorage());
  for (const message of messages) session.appendMessage(message);
  return session.branch();
}

const roleOf = (entry: SessionEntry | undefined) =>
  entry?.type === "message" ? entry.message.role : entry?.type;

describe("cut point: where a compaction splits the branch", () => {
  it("never starts the kept tail at a tool result, even when the token budget ends on one", () => {
    const big = "x".repeat(400); // ~100 tokens
    const entries = branchOf([
      user("start"),
      call("a", big),
      result("a", big),
      call("b", big),
      result("b", big),
      call("c", big),
      result("c", big),
      answer("done"),
    ]);
    // Try every budget: whatever it is, the first kept entry is a cut point and no
    // tool result is kept without the call that produced it.
    for (let keep = 0; keep <= 800; keep += 7) {
      const cut = findCutPoint(entries, keep);
      expect(cut).toBeDefined();
      const kept = entries.slice(cut);
      expect(isCutPoint(kept[0] as SessionEntry)).toBe(true);
      expect(roleOf(kept[0])).not.toBe("toolResult");
      const keptCalls = new Set(
        kept.flatMap((entry) =>
          entry.type === "message" && entry.message.role === "assistant"
            ? entry.message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : []))
            : [],
        ),
      );
      for (const entry of kept) {
        if (entry.type === "message" && entry.message.role === "toolResult") {
          expect(keptCalls.has(entry.message.toolCallId)).toBe(true);
        }
      }
    }
  });

  it("keeps the longest tail that fits keepRecentTokens", () => {
    const entries = branchOf([
      user("a".repeat(400)),
      answer("b".repeat(400)),
      user("c".repeat(40)),
      answer("d"),
    ]);
    const tail = entryTokens(entries[2] as SessionEntry) + entryTokens(entries[3] as SessionEntry);
    expect(findCutPoint(entries, tail)).toBe(2);
    expect(findCutPoint(entries, tail + entryTokens(entries[1] as SessionEntry))).toBe(1);
  });

  it("keeps the latest whole turn when not even that fits the budget", () => {
    const big = "x".repeat(4_000);
    const entries = branchOf([
      user("old"),
      answer("old answer"),
      user("new"),
      call("a", big),
      result("a", big),
    ]);
    expect(findCutPoint(entries, 10)).toBe(3); // the call and its result stay together
  });

  it("finds nothing to compact when the only cut point is the first entry", () => {
    const big = "x".repeat(4_000);
    expect(findCutPoint(branchOf([user("only")]), 0)).toBeUndefined();
    expect(
      findCutPoint(branchOf([user(big), call("a", big), result("a", big)]).slice(1, 3), 0),
    ).toBeUndefined();
  });

  it("branchInContext returns the latest compaction's kept tail and what follows, like buildContext", () => {
    const session = Session.create(new MemoryStorage());
    session.appendMessage(user("one"));
    const kept = session.appendMessage(answer("two"));
    session.append({ type: "compaction", summary: "s", firstKeptEntryId: kept.id, tokensBefore: 1 });
    const after = session.appendMessage(user("three"));
    const { compaction, entries } = branchInContext(session.branch());
    expect(compaction?.summary).toBe("s");
    expect(entries.map((entry) => entry.id)).toEqual([kept.id, after.id]);
    expect(session.buildContext().compaction).toMatchObject({ entryId: compaction?.id, firstNewMessage: 2 });
  });
});

describe("token estimate", () => {
  it("counts chars / 4 and ignores failed assistant messages, which providers skip", () => {
    expect(estimateTextTokens("abcdefgh")).toBe(2);
    const failed = fauxAssistantMessage("x".repeat(400), { stopReason: "error", errorMessage: "boom" });
    expect(estimateMessageTokens(failed)).toBe(0);
    expect(estimateMessageTokens(user("x".repeat(400)))).toBeGreaterThanOrEqual(100);
  });

  it("uses the latest usage figure plus estimates of later messages, but not usage from before a compaction", () => {
    const measured = {
      ...answer("a"),
      usage: {
        input: 900,
        output: 100,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 1_000,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
    } as AgentMessage;
    const later = user("x".repeat(400));
    const messages = [user("q"), measured, later];
    expect(estimateContextTokens(messages)).toBe(1_000 + estimateMessageTokens(later));
    const estimated = messages.reduce((sum, m) => sum + estimateMessageTokens(m), 0);
    expect(estimateContextTokens(messages, { usableFrom: 2, fixedTokens: 7 })).toBe(estimated + 7);
  });
});
