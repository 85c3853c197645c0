/**
 * Plugin code the driver used not to see: a tool's `inspect` runs under the tap
 * timeout and is named in the in-flight ledger; a default-verdict function that
 * fails denies (failing closed), reported with its plugin and hook; and the
 * `toolResult` / `toolUpdate` taps see the call's one view (decided arguments
 * and facts), the same object the gates saw.
 */
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../src/events/event-types.js";
import type { ToolCallInfo } from "../src/hooks/hook-types.js";
import type { ToolCallFacts } from "../src/tools.js";
import { echoTool, fixture, sleep } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

type Facts = ToolCallFacts & { upper?: string };
type PluginError = Extract<HarnessEvent, { type: "plugin_error" }>;

describe("plugin code through the driver", () => {
  it("a hung inspect times out under the tap timeout: the call is denied, and the ledger names it", async () => {
    const echo = echoTool({ owner: "fs-pack", inspect: () => new Promise<never>(() => undefined) });
    const f = fixture({ tools: [echo.tool], failurePolicy: { tapTimeoutMs: 40 } });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const started = Date.now();
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(echo.calls).toHaveLength(0);
    const decision = f.events.find((e) => e.type === "tool_decision");
    expect(decision).toMatchObject({ decision: "deny", by: "harness" });
    expect(decision && "reason" in decision ? decision.reason : "").toMatch(
      /could not inspect the arguments: plugin "fs-pack" timed out in inspect after 40 ms/,
    );
    const hung = await f.harness.close(10);
    expect(hung.map((call) => [call.plugin, call.hook, call.toolCallId])).toEqual([
      ["fs-pack", "inspect", expect.any(String)],
    ]);
  });

  it("a throwing default-verdict function denies, failing closed, reported with its owner and hook", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.setDefaultToolVerdict(
      () => {
        throw new Error("grants file unreadable");
      },
      { owner: "permissions" },
    );
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(echo.calls).toHaveLength(0);
    const decision = f.events.find((e) => e.type === "tool_decision");
    expect(decision).toMatchObject({ decision: "deny", by: "harness:default" });
    expect(decision && "reason" in decision ? decision.reason : "").toContain("grants file unreadable");
    const failure = f.events.find((e): e is PluginError => e.type === "plugin_error");
    expect(failure).toMatchObject({
      plugin: "permissions",
      hook: "defaultToolVerdict",
      code: "hook",
      toolCallId: expect.any(String),
    });
  });

  it("a default-verdict function's malformed answer denies too", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.setDefaultToolVerdict(() => ({ decision: "maybe" }) as never, { owner: "permissions" });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    expect(f.events.find((e) => e.type === "tool_decision")).toMatchObject({
      decision: "deny",
      by: "harness:default",
    });
    expect(f.events.find((e): e is PluginError => e.type === "plugin_error")).toMatchObject({
      plugin: "permissions",
      hook: "defaultToolVerdict",
    });
  });

  it("result and update taps see the call's one view: decided arguments and the facts the gates saw", async () => {
    const echo = echoTool({
      inspect: (args: { text: string }) => ({ upper: args.text.toUpperCase() }) as Facts,
      execute: async (args: { text: string }, context) => {
        context.update({ content: [{ type: "text", text: "half" }] });
        await sleep(1);
        return { content: [{ type: "text", text: args.text }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    const seen: Record<string, ToolCallInfo> = {};
    f.harness.hooks.toolCall.tap("rewrite", (payload) => ({ ...payload, args: { text: "decided" } }));
    f.harness.hooks.toolGate.tap("gate", (_call, context) => {
      seen.gate = context.call;
      return undefined;
    });
    f.harness.hooks.toolUpdate.tap("update", (partial, context) => {
      seen.update = context.call;
      return partial;
    });
    f.harness.hooks.toolResult.tap("result", (result, context) => {
      seen.result = context.call;
      return result;
    });
    f.scripted.script([callTools(["echo", { text: "raw" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(seen.result?.args).toEqual({ text: "decided" });
    expect(seen.result?.facts).toEqual({ upper: "DECIDED" });
    expect(seen.result).toBe(seen.gate);
    expect(seen.update).toBe(seen.gate);
    expect(Object.isFrozen(seen.result)).toBe(true);
  });
});
