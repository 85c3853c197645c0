/**
 * The HTML viewer treats everything recorded as hostile: a session file edited to
 * carry markup in a decider, a reason or a trail step renders it as text (a verdict
 * other than allow/deny is refused by the session itself),
 * and malformed trail steps do not break the export.
 */
import { MemoryStorage, Session } from "@rein/harness";
import { describe, expect, it } from "vitest";
import { sessionHtml } from "../src/export/html.js";

const ATTACK = '"><img src=x onerror=alert(1)><script>alert(2)</script>';

describe("the HTML viewer escapes recorded text", () => {
  it.each([
    ["the decider", { decision: "deny", by: ATTACK, reason: "r" }],
    ["the reason", { decision: "deny", by: "p", reason: ATTACK }],
    ["the asker", { decision: "allow", by: "p", reason: "r", askedBy: ATTACK }],
    [
      "a trail step",
      {
        decision: "deny",
        by: "p",
        reason: "r",
        trail: [
          { hook: ATTACK, by: ATTACK, answer: ATTACK, reason: ATTACK },
          { hook: "toolCall", by: "p", answer: "rewrite", args: { x: ATTACK } },
          null,
          7,
          { hook: "toolGate", by: 42, answer: { not: "a string" } },
        ],
      },
    ],
  ])("in %s", (_where, decision) => {
    const session = Session.create(new MemoryStorage());
    session.appendMessage({ role: "user", content: "go", timestamp: 1 });
    session.appendMessage({
      role: "assistant",
      content: [{ type: "toolCall", id: "c1", name: "push", arguments: {} }],
      api: "faux",
      provider: "faux",
      model: "m",
      usage: {
        input: 0,
        output: 0,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
      },
      stopReason: "toolUse",
      timestamp: 2,
    });
    session.appendMessage({
      role: "toolResult",
      toolCallId: "c1",
      toolName: "push",
      content: [{ type: "text", text: "x" }],
      isError: true,
      timestamp: 3,
      decision,
    } as never);
    const html = sessionHtml(session);
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<script>alert");
    expect(html).toContain("&lt;script&gt;alert");
  });
});
