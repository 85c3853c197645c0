/**
 * `setDecisions()` and `setOnUnanswered()`: the live forms of the options
 * `decisions` and `onUnanswered` (what `rein dev`'s reload applies). Each checks
 * its value by the option table, emits `config_change`, and rules the next run.
 */
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../src/events/event-types.js";
import type { DecisionRecord } from "../src/session/entries.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

type Fixture = ReturnType<typeof fixture>;

const recorded = (f: Fixture): DecisionRecord[] =>
  f.messages().flatMap((m) => (m.role === "toolResult" && "decision" in m && m.decision ? [m.decision] : []));

const changes = (f: Fixture) =>
  f.events.flatMap((e: HarnessEvent) => (e.type === "config_change" ? [e.key] : []));

describe("live decision settings", () => {
  it("setDecisions turns the trail on and off for the next decisions", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("allower", async () => ({ decision: "allow", reason: "ok" }));
    expect(f.harness.decisions).toEqual({ trail: false });
    f.harness.setDecisions({ trail: true });
    expect(f.harness.decisions).toEqual({ trail: true });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("one")]);
    await f.harness.prompt("first");
    f.harness.setDecisions({});
    f.scripted.script([callTools(["echo", { text: "b" }]), reply("two")]);
    await f.harness.prompt("second");
    const [first, second] = recorded(f);
    expect(first?.trail).toEqual([{ hook: "toolGate", by: "allower", answer: "allow", reason: "ok" }]);
    expect(second).not.toHaveProperty("trail");
    expect(changes(f)).toEqual(["decisions", "decisions"]);
  });

  it("setOnUnanswered('park') parks the next unanswered ask; 'deny' denies it again", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("asker", async () => ({
      decision: "ask",
      reason: "a person decides",
    }));
    expect(f.harness.onUnanswered).toBe("deny");
    f.harness.setOnUnanswered("park");
    f.scripted.script([callTools(["echo", { text: "a" }, "c1"])]);
    const parked = await f.harness.prompt("first");
    expect(parked.status).toBe("parked");
    expect(echo.calls).toHaveLength(0);
    expect(changes(f)).toEqual(["onUnanswered"]);
  });

  it("an unanswered ask is denied once the setting is back to deny", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], onUnanswered: "park" });
    f.harness.hooks.toolGate.tapPromise("asker", async () => ({
      decision: "ask",
      reason: "a person decides",
    }));
    f.harness.setOnUnanswered("deny");
    f.scripted.script([callTools(["echo", { text: "a" }, "c1"]), reply("ok")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(recorded(f)[0]).toMatchObject({ decision: "deny" });
  });

  it("rejects values the options would reject", () => {
    const f = fixture();
    expect(() => f.harness.setOnUnanswered("later" as never)).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => f.harness.setDecisions({ trail: "yes" } as never)).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(changes(f)).toEqual([]);
  });
});
