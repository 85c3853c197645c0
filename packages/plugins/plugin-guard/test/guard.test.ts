import { definePlugin, defineTool, type PluginHostEntry, type SessionEntry, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import guard, { type GuardOptions, STOP_ENTRY_TYPE } from "../src/index.js";

const executed: string[] = [];
const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({ command: Type.String() }),
  execute: (args) => {
    executed.push(args.command);
    return { content: [{ type: "text", text: `ran ${args.command}` }] };
  },
});

const call = (command: string) => ({ toolCalls: [{ name: "bash", args: { command } }] });

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  executed.length = 0;
});

async function guarded(
  options: Partial<GuardOptions>,
  script: Parameters<TestHarness["script"]>,
  before: PluginHostEntry[] = [],
) {
  t = await createTestHarness({ plugins: [...before, [guard, options]], tools: [bash], script });
  return t;
}

const stops = (entries: readonly SessionEntry[]) =>
  entries
    .filter((e) => e.type === "custom" && e.customType === STOP_ENTRY_TYPE)
    .map((e) => (e as { data: unknown }).data);

describe("run budgets", () => {
  it("max tool calls: the call past the budget is denied and the run stops at once, the stop is in the session", async () => {
    const h = await guarded({ perRun: { maxToolCalls: 2 } }, [call("a"), call("b"), call("c"), "done"]);
    const outcome = await h.prompt("go");
    expect(outcome).toMatchObject({
      status: "aborted",
      reason: "run budget exhausted: 2 of max 2 tool calls used (perRun.maxToolCalls)",
    });
    // No request after the stop: the model is not asked again.
    expect(h.requests).toHaveLength(3);
    expect(executed).toEqual(["a", "b"]);
    expect(h.decisions().map((d) => [d.decision, d.by])).toEqual([
      ["allow", "harness:default"],
      ["allow", "harness:default"],
      ["deny", "guard:max-tool-calls"],
    ]);
    expect(h.decisions()[2]?.reason).toContain("run budget exhausted: 2 of max 2 tool calls used");
    expect(JSON.stringify(h.messages().at(-1))).toContain("the run is stopped");
    expect(stops(h.session.entries())).toEqual([
      expect.objectContaining({
        scope: "run",
        budget: "max-tool-calls",
        limit: 2,
        used: 2,
        runId: outcome.runId,
      }),
    ]);
  });

  it("max turns: the response that reaches the limit may not run tools", async () => {
    const h = await guarded({ perRun: { maxTurns: 2 } }, [call("a"), call("b"), "done"]);
    expect((await h.prompt("go")).status).toBe("aborted");
    expect(executed).toEqual(["a"]);
    expect(h.decisions().at(-1)).toMatchObject({ decision: "deny", by: "guard:max-turns" });
    expect(stops(h.session.entries())).toEqual([expect.objectContaining({ budget: "max-turns", used: 2 })]);
  });

  it("max tokens: counted from the provider's usage", async () => {
    const h = await guarded({ perRun: { maxTokens: 1 } }, [call("a"), "done"]);
    expect((await h.prompt("go")).status).toBe("aborted");
    expect(executed).toEqual([]);
    expect(h.decisions()[0]).toMatchObject({ decision: "deny", by: "guard:max-tokens" });
    const [stop] = stops(h.session.entries()) as { used: number; reason: string }[];
    const tokens = h.messages().find((m) => m.role === "assistant");
    expect(stop?.used).toBe(tokens?.role === "assistant" ? tokens.usage.totalTokens : -1);
  });

  it("max cost: summed from usage.cost.total", async () => {
    // The faux provider reports zero cost; this meter stands in for a priced provider.
    const meter = definePlugin({
      name: "meter",
      setup(rein) {
        rein.on("message_end", (event) => {
          if (event.message.role === "assistant") event.message.usage.cost.total = 0.03;
        });
      },
    });
    const h = await guarded({ perRun: { maxCost: 0.05 } }, [call("a"), call("b"), "done"], [meter]);
    expect((await h.prompt("go")).status).toBe("aborted");
    expect(executed).toEqual(["a"]);
    expect(h.decisions()[1]).toMatchObject({ decision: "deny", by: "guard:max-cost" });
    expect(h.decisions()[1]?.reason).toContain("0.06 of max 0.05 cost used");
  });

  it("a request about to start past a budget (a follow-up after the answer) is stopped before the model is asked", async () => {
    const h = await guarded({ perRun: { maxTurns: 1 } }, ["first answer", "never requested"]);
    h.harness.on("turn_end", () => h.harness.followUp("and one more thing"));
    const outcome = await h.prompt("go");
    expect(outcome).toMatchObject({ status: "aborted", reason: expect.stringContaining("max 1 turns") });
    expect(h.requests).toHaveLength(1);
    expect(stops(h.session.entries())).toEqual([expect.objectContaining({ budget: "max-turns" })]);
  });

  it("resets per-run budgets for the next run", async () => {
    const h = await guarded({ perRun: { maxToolCalls: 1 } }, [call("a"), "one", call("b"), "two"]);
    await h.prompt("first");
    await h.prompt("second");
    expect(executed).toEqual(["a", "b"]);
  });

  it("answers beforeStop with stop, so no other plugin can extend an exhausted run", async () => {
    const keepGoing = definePlugin({
      name: "keep-going",
      setup(rein) {
        rein.hooks.beforeStop.tap("keep-going", () => ({ decision: "continue", message: "one more thing" }));
      },
    });
    const h = await guarded({ perRun: { maxTurns: 1 } }, ["done"], [keepGoing]);
    expect((await h.prompt("go")).status).toBe("completed");
    expect(h.requests).toHaveLength(1);
    expect(stops(h.session.entries())).toEqual([expect.objectContaining({ budget: "max-turns" })]);
  });
});

describe("session budgets", () => {
  it("counts across runs and blocks the next run with the reason", async () => {
    const h = await guarded({ perSession: { maxToolCalls: 2 } }, [call("a"), call("b"), "done"]);
    expect((await h.prompt("first")).status).toBe("completed");
    const second = await h.prompt("second");
    expect(second).toMatchObject({
      status: "blocked",
      reason: expect.stringContaining("session budget exhausted"),
    });
    expect(stops(h.session.entries())).toEqual([
      expect.objectContaining({ scope: "session", budget: "max-tool-calls", used: 2 }),
    ]);
  });

  it("rebuilds session usage from the entries of a resumed session", async () => {
    t = await createTestHarness({ tools: [bash], script: [call("a"), call("b"), "done"] });
    await t.prompt("unguarded");
    const session = t.session;
    await t.dispose();
    t = await createTestHarness({
      plugins: [[guard, { perSession: { maxTurns: 3 } }]],
      tools: [bash],
      session,
    });
    expect(await t.prompt("again")).toMatchObject({
      status: "blocked",
      reason: "session budget exhausted: 3 of max 3 turns used (perSession.maxTurns)",
    });
    expect(t.requests).toHaveLength(0);
    expect(stops(t.session.entries())).toEqual([
      expect.objectContaining({ scope: "session", budget: "max-turns" }),
    ]);
  });
});

describe("loop detection", () => {
  it("denies the third identical call in a row, by default", async () => {
    const h = await guarded({}, [call("ls"), call("ls"), call("ls"), call("pwd"), call("ls"), "done"]);
    expect((await h.prompt("go")).status).toBe("completed");
    expect(executed).toEqual(["ls", "ls", "pwd", "ls"]);
    expect(h.decisions()[2]).toMatchObject({ decision: "deny", by: "guard:loop" });
    expect(h.decisions()[2]?.reason).toContain("3 times in a row");
  });

  it("is configurable, and off with 0", async () => {
    const h = await guarded({ maxRepeats: 0 }, [call("ls"), call("ls"), call("ls"), "done"]);
    await h.prompt("go");
    expect(executed).toEqual(["ls", "ls", "ls"]);
  });
});

describe("declared rules (for coverage)", () => {
  it("lists the budgets that are set, in either scope, and loop detection when on", async () => {
    const h = await guarded({ perRun: { maxToolCalls: 2 }, perSession: { maxCost: 1 } }, []);
    expect(h.host.plugins.find((p) => p.name === "guard")?.rules).toEqual([
      "guard:max-tool-calls",
      "guard:max-cost",
      "guard:loop",
    ]);
    await h.dispose();
    t = await createTestHarness({ plugins: [[guard, { maxRepeats: 0 }]], tools: [bash] });
    expect(t.host.plugins.find((p) => p.name === "guard")?.rules).toEqual([]);
  });
});
