/**
 * Explain mode (`explainAfterDeny`, what `rein check` uses): after the deciding
 * deny, the gate taps after it are still asked - by the one tap walker, under their
 * timeout, failures tagged - and recorded as `consulted: false` steps. Pinned
 * here: it never changes a verdict (a table of stacks, decided with and without
 * it), and without it - every run - a deny still stops the remaining taps (the
 * later tap's call counter stays at zero).
 */
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../src/events/event-types.js";
import {
  type DecideOptions,
  type DecisionEnvironment,
  decideToolCall,
} from "../src/harness/tool-decisions.js";
import type { GateVerdict } from "../src/hooks/hook-types.js";
import type { DecisionRecord, DecisionStep } from "../src/session/entries.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

type Fixture = ReturnType<typeof fixture>;

/** A gate tap's behaviour in a row: a verdict, a throw, or never answering. */
type Tap = GateVerdict | "throws" | "hangs";

interface Row {
  name: string;
  taps: Tap[];
  /** The decision with the ask not put to permissionAsk, as `rein check` without a terminal. */
  decision: Pick<DecisionRecord, "decision" | "by">;
  /** The explain-mode trail: `by`/`answer`, with `*` for a step that did not count. */
  trail: string[];
}

const table: Row[] = [
  {
    name: "deny then allow",
    taps: [
      { decision: "deny", reason: "no" },
      { decision: "allow", reason: "fine" },
    ],
    decision: { decision: "deny", by: "t0" },
    trail: ["t0/deny", "t1/allow*"],
  },
  {
    name: "deny then ask (the ask is not put to permissionAsk)",
    taps: [
      { decision: "deny", reason: "no" },
      { decision: "ask", reason: "confirm" },
    ],
    decision: { decision: "deny", by: "t0" },
    trail: ["t0/deny", "t1/ask*"],
  },
  {
    name: "deny then a throwing tap",
    taps: [{ decision: "deny", reason: "no" }, "throws", { decision: "allow", reason: "fine" }],
    decision: { decision: "deny", by: "t0" },
    trail: ["t0/deny", "t1/error*", "t2/allow*"],
  },
  {
    name: "deny then a tap past its timeout",
    taps: [{ decision: "deny", reason: "no" }, "hangs", { decision: "allow", reason: "fine" }],
    decision: { decision: "deny", by: "t0" },
    trail: ["t0/deny", "t1/error*", "t2/allow*"],
  },
  {
    name: "ask then deny",
    taps: [
      { decision: "ask", reason: "confirm" },
      { decision: "deny", reason: "no" },
    ],
    decision: { decision: "deny", by: "t1" },
    trail: ["t0/ask", "t1/deny"],
  },
  {
    name: "ask then deny then allow",
    taps: [
      { decision: "ask", reason: "confirm" },
      { decision: "deny", reason: "no", rule: "r1" },
      { decision: "allow", reason: "fine", rule: "r2" },
    ],
    decision: { decision: "deny", by: "t1:r1" },
    trail: ["t0/ask", "t1:r1/deny", "t2:r2/allow*"],
  },
  {
    name: "a throwing tap first (it fails closed: deny) then allow",
    taps: ["throws", { decision: "allow", reason: "fine" }],
    decision: { decision: "deny", by: "t0" },
    trail: ["t0/error", "t1/allow*"],
  },
  {
    name: "no deny: allow then ask (nothing is asked twice; with permissionAsk, a person allows)",
    taps: [
      { decision: "allow", reason: "fine" },
      { decision: "ask", reason: "confirm" },
    ],
    decision: { decision: "deny", by: "t1" },
    trail: ["t0/allow", "t1/ask"],
  },
];

/** Taps the row's gates, each counting its calls; a permissionAsk tap that would allow, counting too. */
function stack(f: Fixture, taps: Tap[]) {
  const calls = taps.map(() => 0);
  taps.forEach((tap, index) => {
    f.harness.hooks.toolGate.tapPromise(`t${index}`, async () => {
      calls[index] = (calls[index] ?? 0) + 1;
      if (tap === "throws") throw new Error("rules file missing");
      if (tap === "hangs") return new Promise<never>(() => undefined);
      return tap;
    });
  });
  let asked = 0;
  f.harness.hooks.permissionAsk.tapPromise("human", async () => {
    asked += 1;
    return { decision: "allow", reason: "a person said yes" };
  });
  return { calls, asked: () => asked };
}

function environment(f: Fixture): DecisionEnvironment {
  return {
    ...f.harness.decisionEnvironment(new AbortController().signal),
    defaultVerdict: () => "allow",
    place: { cwd: process.cwd(), sessionId: "s" },
  };
}

const call = { type: "toolCall" as const, id: "c1", name: "echo", arguments: { text: "x" } };

async function decideWith(row: Row, options: DecideOptions) {
  const echo = echoTool();
  const f = fixture({ tools: [echo.tool], failurePolicy: { tapTimeoutMs: 40 } });
  const counters = stack(f, row.taps);
  const decided = await decideToolCall(environment(f), call, echo.tool, { text: "x" }, options);
  await f.harness.close(10);
  return { decided, counters, events: f.events };
}

const short = (step: DecisionStep) => `${step.by}/${step.answer}${step.consulted === false ? "*" : ""}`;

/** The decision as a run would record it, trail aside. */
const verdictOf = (record: DecisionRecord | undefined) => {
  const { trail: _trail, ...rest } = record ?? ({} as DecisionRecord);
  return rest;
};

describe("explain mode never changes a verdict", () => {
  for (const row of table) {
    it(row.name, async () => {
      // skipPermission as rein check without a terminal; and with permissionAsk, as an evaluation that asks.
      for (const skipPermission of [true, false]) {
        const plain = await decideWith(row, { skipPermission, trail: true });
        const explained = await decideWith(row, { skipPermission, trail: true, explainAfterDeny: true });
        expect(verdictOf(explained.decided.decision)).toEqual(verdictOf(plain.decided.decision));
        expect(explained.decided.action).toBe(plain.decided.action);
        expect(explained.decided.gate).toEqual(plain.decided.gate);
        expect(explained.counters.asked()).toBe(plain.counters.asked());
        if (skipPermission) expect(explained.decided.decision).toMatchObject(row.decision);
        // Every tap is asked exactly once in explain mode; a step per tap, the later ones marked.
        expect(explained.counters.calls).toEqual(row.taps.map(() => 1));
        const gateSteps = (explained.decided.trail ?? []).filter((step) => step.hook === "toolGate");
        expect(gateSteps.map(short)).toEqual(row.trail);
        // The same trail without the steps that did not count is the plain one.
        expect((explained.decided.trail ?? []).filter((step) => step.consulted !== false)).toEqual(
          plain.decided.trail,
        );
        expect(explained.decided.decision?.trail).toBe(explained.decided.trail);
      }
    });
  }

  it("the steps that did not count say what the tap would have said, and why a failure failed", async () => {
    const row = table[2] as Row;
    const { decided, events } = await decideWith(row, { explainAfterDeny: true });
    expect(decided.trail).toEqual([
      { hook: "toolGate", by: "t0", answer: "deny", reason: "no" },
      {
        hook: "toolGate",
        by: "t1",
        answer: "error",
        reason: expect.stringMatching(/rules file missing.*failing closed: deny/),
        consulted: false,
      },
      { hook: "toolGate", by: "t2", answer: "allow", reason: "fine", consulted: false },
    ]);
    expect(decided.decision).toMatchObject({ decision: "deny", by: "t0", reason: "no" });
    // The failure is tagged with its plugin and hook, as in a run.
    const failure = events.find(
      (e): e is Extract<HarnessEvent, { type: "plugin_error" }> => e.type === "plugin_error",
    );
    expect(failure).toMatchObject({ plugin: "t1", hook: "toolGate", toolCallId: "c1" });
    expect(failure?.message).toContain("rules file missing");
  });

  it("a tap past its deadline is cut off by its timeout, not waited for", async () => {
    const row = table[3] as Row;
    const started = Date.now();
    const { decided } = await decideWith(row, { explainAfterDeny: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(decided.trail?.[1]).toMatchObject({ by: "t1", answer: "error", consulted: false });
    expect(decided.trail?.[1]?.reason).toMatch(/timed out/);
  });

  it("implies the trail: explainAfterDeny alone returns one", async () => {
    const { decided } = await decideWith(table[0] as Row, { explainAfterDeny: true });
    expect(decided.trail?.map(short)).toEqual(["t0/deny", "t1/allow*"]);
  });
});

describe("without explain mode a deny stops the remaining taps", () => {
  it("decideToolCall, with or without a trail: the tap after the deny is never called", async () => {
    const row = table[0] as Row;
    for (const options of [{}, { trail: true }, { trail: true, explainAfterDeny: false }]) {
      const { decided, counters } = await decideWith(row, options);
      expect(decided.decision).toMatchObject({ decision: "deny", by: "t0" });
      expect(counters.calls).toEqual([1, 0]);
    }
  });

  it("a run (decisions.trail on or off): the tap after the deny is never called, the record has no such step", async () => {
    for (const trail of [true, false]) {
      const echo = echoTool();
      const f = fixture({ tools: [echo.tool], decisions: { trail } });
      const counters = stack(f, [
        { decision: "deny", reason: "no" },
        { decision: "allow", reason: "fine" },
      ]);
      f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
      await f.harness.prompt("go");
      expect(counters.calls).toEqual([1, 0]);
      expect(echo.calls).toHaveLength(0);
      const records = f
        .messages()
        .flatMap((m) => (m.role === "toolResult" && "decision" in m && m.decision ? [m.decision] : []));
      expect(records).toEqual([
        {
          decision: "deny",
          by: "t0",
          reason: "no",
          ...(trail ? { trail: [{ hook: "toolGate", by: "t0", answer: "deny", reason: "no" }] } : {}),
        },
      ]);
      await f.harness.close(10);
    }
  });
});
