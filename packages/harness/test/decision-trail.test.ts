/**
 * Decision trails (`decisions: { trail: true }`): every tap that ran leaves one
 * step, in order, on the persisted decision and the `tool_decision` event; off
 * by default, nothing is recorded.
 */
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../src/events/event-types.js";
import { type DecisionEnvironment, decideToolCall } from "../src/harness/tool-decisions.js";
import type { DecisionRecord } from "../src/session/entries.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

type Fixture = ReturnType<typeof fixture>;

const recorded = (f: Fixture): DecisionRecord[] =>
  f.messages().flatMap((m) => (m.role === "toolResult" && "decision" in m && m.decision ? [m.decision] : []));

const decisionEvents = (f: Fixture) =>
  f.events.filter((e): e is Extract<HarnessEvent, { type: "tool_decision" }> => e.type === "tool_decision");

async function runOneCall(f: Fixture, args: Record<string, unknown> = { text: "x" }) {
  f.scripted.script([callTools(["echo", args]), reply("done")]);
  return f.harness.prompt("go");
}

describe("decision trail: what every tap said, in order", () => {
  it("is off by default: neither the record nor the event carries a trail", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("allower", async () => ({ decision: "allow", reason: "ok" }));
    await runOneCall(f);
    expect(recorded(f)).toEqual([{ decision: "allow", by: "allower", reason: "ok" }]);
    expect(decisionEvents(f)[0]).not.toHaveProperty("trail");
  });

  it("records toolCall, toolGate and permissionAsk taps in order: no opinion, rewrite with its args, rule names, the answer", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], decisions: { trail: true } });
    const { hooks } = f.harness;
    hooks.toolCall.tapPromise("watcher", async () => undefined);
    hooks.toolCall.tapPromise("shouter", async (call) => ({ ...call, args: { text: "X!" } }));
    hooks.toolCall.tapPromise("same-args", async (call) => ({ ...call }));
    hooks.toolGate.tapPromise("quiet", async () => undefined);
    hooks.toolGate.tapPromise("policy", async () => ({
      decision: "allow",
      reason: "echo is fine",
      rule: "echo-ok",
    }));
    hooks.toolGate.tapPromise("asker", async () => ({
      decision: "ask",
      reason: "confirm",
      rule: "confirm-all",
    }));
    hooks.permissionAsk.tapPromise("silent", async () => undefined);
    hooks.permissionAsk.tapPromise("human", async () => ({ decision: "allow", reason: "yes" }));
    await runOneCall(f);

    const trail = [
      { hook: "toolCall", by: "watcher", answer: "no opinion" },
      { hook: "toolCall", by: "shouter", answer: "rewrite", args: { text: "X!" } },
      { hook: "toolCall", by: "same-args", answer: "no opinion" },
      { hook: "toolGate", by: "quiet", answer: "no opinion" },
      { hook: "toolGate", by: "policy:echo-ok", answer: "allow", reason: "echo is fine" },
      { hook: "toolGate", by: "asker:confirm-all", answer: "ask", reason: "confirm" },
      { hook: "permissionAsk", by: "silent", answer: "no opinion" },
      { hook: "permissionAsk", by: "human", answer: "allow", reason: "yes" },
    ];
    expect(echo.calls.map((c) => c.args)).toEqual([{ text: "X!" }]);
    expect(recorded(f)).toEqual([
      { decision: "allow", by: "human", reason: "yes", askedBy: "asker:confirm-all", trail },
    ]);
    expect(decisionEvents(f)[0]).toMatchObject({ by: "human", trail });
    // Persisted as plain JSON on the tool result's entry.
    const entry = f.session.branch().find((e) => e.type === "message" && e.message.role === "toolResult") as {
      message: unknown;
    };
    expect(JSON.parse(JSON.stringify(entry.message))).toMatchObject({ decision: { trail } });
  });

  it("stops at the deny that ended the gate: later taps did not run and are not in the trail", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], decisions: { trail: true } });
    f.harness.hooks.toolGate.tapPromise("allow-1", async () => ({ decision: "allow", reason: "fine" }));
    f.harness.hooks.toolGate.tapPromise("denier", async () => ({
      decision: "deny",
      reason: "no",
      rule: "r7",
    }));
    f.harness.hooks.toolGate.tapPromise("allow-2", async () => ({ decision: "allow", reason: "override?" }));
    await runOneCall(f);
    expect(echo.calls).toHaveLength(0);
    expect(recorded(f)).toEqual([
      {
        decision: "deny",
        by: "denier:r7",
        reason: "no",
        trail: [
          { hook: "toolGate", by: "allow-1", answer: "allow", reason: "fine" },
          { hook: "toolGate", by: "denier:r7", answer: "deny", reason: "no" },
        ],
      },
    ]);
  });

  it("an ask nobody answers: the gate's ask, then nothing (the record says unanswered)", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], decisions: { trail: true } });
    f.harness.hooks.toolGate.tapPromise("asker", async () => ({ decision: "ask", reason: "confirm" }));
    await runOneCall(f);
    expect(recorded(f)[0]).toMatchObject({
      decision: "deny",
      unanswered: true,
      trail: [{ hook: "toolGate", by: "asker", answer: "ask", reason: "confirm" }],
    });
  });

  it("no opinion from any tap: the trail says so and the default decides", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], decisions: { trail: true }, defaultToolVerdict: "deny" });
    f.harness.hooks.toolGate.tapPromise("indifferent", async () => undefined);
    await runOneCall(f);
    expect(recorded(f)[0]).toMatchObject({
      decision: "deny",
      by: "harness:default",
      trail: [{ hook: "toolGate", by: "indifferent", answer: "no opinion" }],
    });
  });
});

describe("decision trail: failures are steps with what the policy made of them", () => {
  const table: {
    name: string;
    policy?: { transform?: "skip-tap"; gate?: "ask"; tapTimeoutMs?: number };
    tap(f: Fixture): void;
    step: { hook: string; by: string; answer: "error"; reason: RegExp };
    decision: Partial<DecisionRecord>;
  }[] = [
    {
      name: "a gate that throws fails closed (deny)",
      tap: (f) =>
        f.harness.hooks.toolGate.tapPromise("crashy", async () => {
          throw new Error("policy file missing");
        }),
      step: {
        hook: "toolGate",
        by: "crashy",
        answer: "error",
        reason: /policy file missing.*failing closed: deny/,
      },
      decision: { decision: "deny", by: "crashy" },
    },
    {
      name: "a malformed verdict fails closed",
      tap: (f) => f.harness.hooks.toolGate.tapPromise("sloppy", async () => ({ decision: "yes" }) as never),
      step: { hook: "toolGate", by: "sloppy", answer: "error", reason: /malformed.*failing closed: deny/ },
      decision: { decision: "deny", by: "sloppy" },
    },
    {
      name: "a gate past its timeout fails closed",
      policy: { tapTimeoutMs: 30 },
      tap: (f) => f.harness.hooks.toolGate.tapPromise("hung", () => new Promise(() => undefined)),
      step: { hook: "toolGate", by: "hung", answer: "error", reason: /timed out.*failing closed: deny/ },
      decision: { decision: "deny", by: "hung" },
    },
    {
      name: "a throwing toolCall tap under skip-tap is skipped, the call goes on",
      policy: { transform: "skip-tap" },
      tap: (f) =>
        f.harness.hooks.toolCall.tapPromise("broken-rewriter", async () => {
          throw new Error("regex blew up");
        }),
      step: {
        hook: "toolCall",
        by: "broken-rewriter",
        answer: "error",
        reason: /regex blew up.*tap skipped/,
      },
      decision: { decision: "allow", by: "harness:default" },
    },
    {
      name: "a throwing permissionAsk tap denies",
      tap: (f) => {
        f.harness.hooks.toolGate.tapPromise("asker", async () => ({ decision: "ask", reason: "confirm" }));
        f.harness.hooks.permissionAsk.tapPromise("prompt", async () => {
          throw new Error("no tty");
        });
      },
      step: { hook: "permissionAsk", by: "prompt", answer: "error", reason: /no tty.*failing closed: deny/ },
      decision: { decision: "deny", by: "prompt", askedBy: "asker" },
    },
  ];
  for (const row of table) {
    it(row.name, async () => {
      const echo = echoTool();
      const f = fixture({
        tools: [echo.tool],
        decisions: { trail: true },
        ...(row.policy ? { failurePolicy: row.policy } : {}),
      });
      row.tap(f);
      await runOneCall(f);
      const [decision] = recorded(f);
      expect(decision).toMatchObject(row.decision);
      const failed = decision?.trail?.find((step) => step.answer === "error");
      expect(failed).toMatchObject({ hook: row.step.hook, by: row.step.by, answer: "error" });
      expect(failed?.reason).toMatch(row.step.reason);
      await f.harness.close(10);
    });
  }

  it("a gate failing under policy gate: ask records the error once, then the ask goes to permissionAsk", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], decisions: { trail: true }, failurePolicy: { gate: "ask" } });
    f.harness.hooks.toolGate.tapPromise("crashy", async () => {
      throw new Error("boom");
    });
    await runOneCall(f);
    const trail = recorded(f)[0]?.trail ?? [];
    expect(trail.map((s) => `${s.hook}/${s.by}/${s.answer}`)).toEqual(["toolGate/crashy/error"]);
    expect(trail[0]?.reason).toMatch(/boom.*failing closed: ask/);
    expect(recorded(f)[0]).toMatchObject({ decision: "deny", unanswered: true });
  });
});

describe("decideToolCall with trail (what rein check and evaluateToolCall use)", () => {
  it("returns the trail on the decision even when the ask is not put to permissionAsk", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("asker", async () => ({ decision: "ask", reason: "confirm" }));
    f.harness.hooks.permissionAsk.tapPromise("human", async () => ({ decision: "allow" }));
    const env: DecisionEnvironment = {
      ...f.harness.decisionEnvironment(new AbortController().signal),
      defaultVerdict: () => "allow",
      place: { cwd: process.cwd(), sessionId: "s" },
    };
    const call = { type: "toolCall" as const, id: "c1", name: "echo", arguments: { text: "x" } };
    const decided = await decideToolCall(
      env,
      call,
      echo.tool,
      { text: "x" },
      { skipPermission: true, trail: true },
    );
    const trail = [{ hook: "toolGate", by: "asker", answer: "ask", reason: "confirm" }];
    expect(decided.trail).toEqual(trail);
    expect(decided.decision?.trail).toEqual(trail);
    expect(decided.gate).toMatchObject({ decision: "ask", by: "asker" });
    // Refused by the harness before any tap ran: an empty trail, not a missing one.
    const invalid = await decideToolCall(
      env,
      { ...call, arguments: {} },
      echo.tool,
      {},
      { validate: true, trail: true },
    );
    expect(invalid.decision).toEqual({
      decision: "deny",
      by: "harness",
      reason: "invalid arguments",
      trail: [],
    });
    const plain = await decideToolCall(env, call, echo.tool, { text: "x" }, { skipPermission: true });
    expect(plain).not.toHaveProperty("trail");
    expect(plain.decision).not.toHaveProperty("trail");
  });
});

describe("decisions option", () => {
  it.each([
    [{ trail: "yes" }, /options\.decisions\.trail must be a boolean/],
    [{ trial: true }, /options\.decisions\.trial must be absent/],
    ["on", /options\.decisions must be an object/],
  ])("rejects %j naming the option", (decisions, message) => {
    expect(() => fixture({ decisions: decisions as never })).toThrow(
      expect.objectContaining({ code: "invalid_argument", message: expect.stringMatching(message) }),
    );
  });
});
