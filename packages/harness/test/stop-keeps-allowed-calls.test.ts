/**
 * `context.stopRun(reason)` ends a run without cancelling what a gate allowed
 * (issue 30): the calls of a response are decided one by one in call order;
 * a call allowed before the stop runs to its end with a signal that is not
 * aborted, result taps included; the calls not yet decided are refused by
 * `harness:stopped` with the stop's reason; only a person's `abort()` cancels
 * a running or allowed call.
 */
import { describe, expect, it } from "vitest";
import type { RecordedToolResult } from "../src/session/entries.js";
import { echoTool, fixture, gate } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const results = (f: ReturnType<typeof fixture>) =>
  f.messages().filter((m): m is RecordedToolResult => m.role === "toolResult");
const texts = (f: ReturnType<typeof fixture>) =>
  results(f).map((r) => (r.content[0]?.type === "text" ? r.content[0].text : ""));

describe.each(["parallel", "sequential"] as const)("stopRun with %s tools", (executionMode) => {
  it("a gate that stops at the third call: the two it allowed run, the later calls are refused with the stop's reason", async () => {
    const signals: boolean[] = [];
    const echo = echoTool({
      executionMode,
      execute: async (args: { text: string }, context) => {
        signals.push(context.signal.aborted);
        return { content: [{ type: "text", text: `echo: ${args.text}` }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    let seen = 0;
    f.harness.hooks.toolGate.tap("budget", (_call, context) => {
      if (++seen <= 2) return { decision: "allow", reason: "within budget" };
      context.stopRun("budget: 2 calls");
      return { decision: "deny", reason: "budget exhausted" };
    });
    f.scripted.script([
      callTools(
        ["echo", { text: "a" }, "c1"],
        ["echo", { text: "b" }, "c2"],
        ["echo", { text: "c" }, "c3"],
        ["echo", { text: "d" }, "c4"],
      ),
      reply("never requested"),
    ]);
    const outcome = await f.harness.prompt("go");

    expect(outcome).toMatchObject({ status: "aborted", reason: "budget: 2 calls" });
    expect(signals).toEqual([false, false]);
    expect(f.scripted.requests).toHaveLength(1);
    // The gate was not asked about the call after the stop.
    expect(seen).toBe(3);
    expect(texts(f)).toEqual([
      "echo: a",
      "echo: b",
      "Tool call denied by budget: budget exhausted",
      "not executed: the run was stopped (budget: 2 calls)",
    ]);
    expect(results(f)[3]?.decision).toEqual({
      decision: "deny",
      by: "harness:stopped",
      reason: "budget: 2 calls",
    });
    expect(f.events.filter((e) => e.type === "tool_decision").map((e) => e.decision)).toEqual([
      "allow",
      "allow",
      "deny",
      "deny",
    ]);
  });
});

describe("stopRun while allowed calls are running", () => {
  it("a stop from a finished call's toolResult tap lets the running sibling finish, its result tap included", async () => {
    const slowDone = gate();
    const seen: { call: string; aborted: boolean }[] = [];
    const echo = echoTool({
      execute: async (args: { text: string }, context) => {
        if (args.text === "slow") await slowDone.opened;
        seen.push({ call: args.text, aborted: context.signal.aborted });
        return { content: [{ type: "text", text: `echo: ${args.text}` }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    const tapped: string[] = [];
    f.harness.hooks.toolResult.tap("meter", (result, context) => {
      tapped.push(context.call.id);
      if (context.call.id === "fast") {
        context.stopRun("meter says stop");
        slowDone.open();
      }
      return { ...result, details: { metered: true } };
    });
    f.scripted.script([
      callTools(["echo", { text: "fast" }, "fast"], ["echo", { text: "slow" }, "slow"]),
      reply("no"),
    ]);
    const outcome = await f.harness.prompt("go");

    expect(outcome).toMatchObject({ status: "aborted", reason: "meter says stop" });
    expect(seen).toEqual([
      { call: "fast", aborted: false },
      { call: "slow", aborted: false },
    ]);
    expect(tapped).toEqual(["fast", "slow"]);
    expect(texts(f)).toEqual(["echo: fast", "echo: slow"]);
    expect(results(f).map((r) => r.details)).toEqual([{ metered: true }, { metered: true }]);
    expect(f.scripted.requests).toHaveLength(1);
  });

  it("a person's abort after a plugin's stop still cancels the running call", async () => {
    const started = gate();
    let cancelled = false;
    const echo = echoTool({
      execute: (_args, context) =>
        new Promise((resolve) => {
          started.open();
          context.signal.addEventListener("abort", () => {
            cancelled = true;
            resolve({ content: [{ type: "text", text: "cancelled" }], isError: true });
          });
        }),
    });
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tap("stopper", (_call, context) => {
      context.stopRun("plugin stop");
      return { decision: "allow", reason: "this one may run" };
    });
    f.scripted.script([callTools(["echo", { text: "a" }, "c1"]), reply("no")]);
    const running = f.harness.prompt("go");
    await started.opened;
    expect(cancelled).toBe(false);
    f.harness.abort("the person pressed Ctrl-C");
    const outcome = await running;

    expect(cancelled).toBe(true);
    expect(outcome.status).toBe("aborted");
    expect(texts(f)).toEqual(["cancelled"]);
    expect(f.events.filter((e) => e.type === "abort").map((e) => e.type === "abort" && e.reason)).toEqual([
      "plugin stop",
      "the person pressed Ctrl-C",
    ]);
  });
});
