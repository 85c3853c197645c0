/**
 * Coverage counting (replay/coverage.ts): a hit is an answer other than "no
 * opinion" or "error" naming a rule, from the decision trail when there is one (a
 * rule that lost to a stricter one still counts), else the gate's decider.
 */
import { describe, expect, it } from "vitest";
import type { ReplayLine } from "../src/commands/replay.js";
import { coverageOf } from "../src/replay/coverage.js";

const line = (over: Partial<ReplayLine>): ReplayLine => ({
  index: 1,
  entryId: "e",
  toolCallId: "c",
  tool: "bash",
  args: {},
  recorded: "allow",
  now: "allow",
  by: "harness:default",
  reason: "",
  changed: false,
  ...over,
});

describe("coverage counting", () => {
  it("counts every rule that answered in the trail, not only the winner", () => {
    const report = coverageOf(
      ["policy:no-push", "policy:git-ok", "policy:never"],
      [
        {
          session: "s1",
          lines: [
            line({
              now: "deny",
              by: "policy:no-push",
              trail: [
                { hook: "toolGate", by: "guard", answer: "no opinion" },
                { hook: "toolGate", by: "policy:git-ok", answer: "allow" },
                { hook: "toolGate", by: "policy:no-push", answer: "deny", reason: "no" },
                { hook: "toolGate", by: "flaky", answer: "error" },
              ],
            }),
          ],
        },
      ],
    );
    expect(report.rules).toEqual([
      { rule: "policy:no-push", hits: 1 },
      { rule: "policy:git-ok", hits: 1 },
      { rule: "policy:never", hits: 0 },
    ]);
    expect(report.neverMatched).toEqual(["policy:never"]);
    // "no opinion" (guard) and "error" (flaky) are not hits.
    expect(report.otherDeciders).toEqual([]);
  });

  it("without a trail counts the gate's decider; a default is listed with its session; unreached calls are counted apart", () => {
    const report = coverageOf(
      ["policy:a"],
      [
        {
          session: "s1",
          lines: [line({ by: "policy:a" }), line({ toolCallId: "d1", tool: "read", now: "ask" })],
        },
        {
          session: "s2",
          lines: [
            line({ by: "house", now: "deny" }),
            line({ by: "house" }),
            line({ by: "harness", now: "deny" }),
            line({ now: "not reached", by: "replay" }),
          ],
        },
      ],
    );
    expect(report).toEqual({
      sessions: 2,
      calls: 6,
      rules: [{ rule: "policy:a", hits: 1 }],
      neverMatched: [],
      otherDeciders: [
        { rule: "house", hits: 2 },
        { rule: "harness", hits: 1 },
        { rule: "harness:default", hits: 1 },
      ],
      byDefault: [{ session: "s1", toolCallId: "d1", tool: "read", args: {}, decision: "ask" }],
      notReached: 1,
    });
  });
});
