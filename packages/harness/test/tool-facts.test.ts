/**
 * Tool facts: a tool's `inspect` runs once on the final arguments, and the gates
 * and the execution see the same frozen object (security invariants 1 and 2:
 * decide once, execute what was decided).
 */
import { describe, expect, it } from "vitest";
import { runAgentLoop } from "../src/loop/agent-loop.js";
import type { ToolCallFacts, ToolExecutionContext } from "../src/tools.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply, scriptedModel } from "./support/scripted-model.js";

type Facts = ToolCallFacts & { upper?: string };

describe("tool facts", () => {
  it("the gate and the execution see the same facts, computed once after toolCall rewrites", async () => {
    let inspections = 0;
    const seen: { gate?: Facts; exec?: Readonly<Facts> } = {};
    const echo = echoTool({
      inspect: (args: { text: string }, place) => {
        inspections += 1;
        expect(place.cwd).toBe(process.cwd());
        return { upper: args.text.toUpperCase() } as Facts;
      },
      execute: async (_args, context: ToolExecutionContext) => {
        seen.exec = context.facts as Facts;
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolCall.tap("rewrite", (payload) => ({ ...payload, args: { text: "rewritten" } }));
    f.harness.hooks.toolGate.tap("look", (call) => {
      seen.gate = call.facts as Facts;
      return undefined;
    });
    f.scripted.script([callTools(["echo", { text: "original" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(inspections).toBe(1);
    expect(seen.gate).toEqual({ upper: "REWRITTEN" });
    expect(seen.exec).toBe(seen.gate);
    expect(Object.isFrozen(seen.gate)).toBe(true);
  });

  it("a throwing inspect denies the call (fail closed) and the tool never runs", async () => {
    const echo = echoTool({
      inspect: () => {
        throw new Error("path too long");
      },
    });
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    const decision = f.events.find((e) => e.type === "tool_decision");
    expect(decision).toMatchObject({ decision: "deny", by: "harness" });
    expect(decision && "reason" in decision ? decision.reason : "").toContain("path too long");
  });

  it("a tool without inspect gets empty frozen facts", async () => {
    let facts: unknown;
    const echo = echoTool({
      execute: async (_args, context: ToolExecutionContext) => {
        facts = context.facts;
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(facts).toEqual({});
    expect(Object.isFrozen(facts)).toBe(true);
  });

  it("the loop used alone hands execute the facts of inspect", async () => {
    let facts: unknown;
    const echo = echoTool({
      inspect: (args: { text: string }) => ({ upper: args.text.toUpperCase() }) as Facts,
      execute: async (_args, context: ToolExecutionContext) => {
        facts = context.facts;
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const scripted = scriptedModel();
    scripted.script([callTools(["echo", { text: "abc" }]), reply("done")]);
    const result = await runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], {
      streamFn: scripted.stream,
      context: {
        model: scripted.model,
        systemPrompt: "",
        messages: [],
        tools: [echo.tool],
        thinkingLevel: "off",
        requestOptions: {},
      },
    });
    expect(result.status).toBe("completed");
    expect(facts).toEqual({ upper: "ABC" });
  });
});
