import { describe, expect, it } from "vitest";
import { definePlugin, defineTool, type LogRecord, Stage, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const echo = defineTool({
  name: "echo",
  description: "Echo text",
  risk: "read",
  parameters: Type.Object({ text: Type.String() }),
  execute: (args) => ({ content: [{ type: "text", text: args.text }] }),
});

describe("attribution", () => {
  it("records the plugin's name as `by`, whatever name the author passed to tap", async () => {
    const plugin = definePlugin({
      name: "no-echo",
      setup(rein) {
        rein.hooks.toolGate.tapPromise("some-other-label", async () => ({ decision: "deny", reason: "no" }));
      },
    });
    const t = await createTestHarness({ plugins: [plugin], tools: [echo] });
    expect(await t.checkToolCall({ name: "echo", args: { text: "x" } })).toMatchObject({
      decision: "deny",
      by: "no-echo",
    });
    expect(t.harness.hooks.toolGate.taps.map((tap) => tap.name)).toEqual(["no-echo"]);
    expect(t.host.plugins[0]?.taps).toEqual([
      { hook: "toolGate", type: "promise", stage: 0, label: "some-other-label" },
    ]);
    await t.dispose();
  });

  it("records `plugin:rule` when a verdict carries a rule, in the event and the persisted result", async () => {
    const plugin = definePlugin({
      name: "policy",
      setup(rein) {
        rein.hooks.toolGate.tap({ name: "policy", stage: Stage.early }, () => ({
          decision: "deny",
          rule: "no-echo",
          reason: "echo is off",
        }));
      },
    });
    const t = await createTestHarness({
      plugins: [plugin],
      tools: [echo],
      script: [{ toolCalls: [{ name: "echo", args: { text: "hi" } }] }, "ok"],
    });
    await t.prompt("go");
    expect(t.decisions()).toMatchObject([{ decision: "deny", by: "policy:no-echo", reason: "echo is off" }]);
    const toolResult = t.messages().find((message) => message.role === "toolResult");
    expect(toolResult).toMatchObject({ isError: true, decision: { decision: "deny", by: "policy:no-echo" } });
    expect(t.host.plugins[0]?.taps[0]).toMatchObject({ hook: "toolGate", stage: Stage.early });
    await t.dispose();
  });

  it("strictest verdict wins across plugins and keeps its author", async () => {
    const allow = definePlugin({
      name: "allow-all",
      setup: (rein) => rein.hooks.toolGate.tap("x", () => ({ decision: "allow", reason: "fine" })),
    });
    const ask = definePlugin({
      name: "asker",
      setup: (rein) =>
        rein.hooks.toolGate.tap("x", () => ({ decision: "ask", rule: "confirm", reason: "sure?" })),
    });
    const t = await createTestHarness({ plugins: [allow, ask], tools: [echo] });
    expect(
      await t.checkToolCall({ name: "echo", args: { text: "x" } }, { skipPermission: true }),
    ).toMatchObject({
      decision: "ask",
      by: "asker:confirm",
    });
    await t.dispose();
  });

  it("names the plugin when its gate throws (fail closed)", async () => {
    const plugin = definePlugin({
      name: "crashy",
      setup: (rein) =>
        rein.hooks.toolGate.tap("crashy", () => {
          throw new Error("boom");
        }),
    });
    const t = await createTestHarness({ plugins: [plugin], tools: [echo] });
    const verdict = await t.checkToolCall({ name: "echo", args: { text: "x" } });
    expect(verdict).toMatchObject({ decision: "deny", by: "crashy" });
    await t.dispose();
  });

  it("fails closed, naming the plugin, when a second tapPromise throws synchronously", async () => {
    const first = definePlugin({
      name: "first",
      setup: (rein) => rein.hooks.toolGate.tapPromise("first", async () => undefined),
    });
    const second = definePlugin({
      name: "second",
      setup: (rein) =>
        rein.hooks.toolGate.tapPromise("second", () => {
          throw new Error("sync throw");
        }),
    });
    const t = await createTestHarness({ plugins: [first, second], tools: [echo] });
    expect(await t.checkToolCall({ name: "echo", args: { text: "x" } })).toMatchObject({
      decision: "deny",
      by: "second",
    });
    await t.dispose();
  });

  it("names the plugin in plugin_error when one of its listeners throws", async () => {
    const plugin = definePlugin({
      name: "noisy",
      setup(rein) {
        rein.on("agent_start", () => {
          throw new Error("listener broke");
        });
      },
    });
    const t = await createTestHarness({ plugins: [plugin], script: ["hello"] });
    const outcome = await t.prompt("hi");
    expect(outcome.status).toBe("completed");
    expect(t.eventsOf("plugin_error")).toMatchObject([{ plugin: "noisy", hook: "event:agent_start" }]);
    await t.dispose();
  });

  it("stamps registered tools with their plugin as owner", async () => {
    const plugin = definePlugin({ name: "pack", setup: (rein) => void rein.registerTool(echo) });
    const t = await createTestHarness({ plugins: [plugin] });
    expect(t.harness.tools.map((tool) => [tool.name, tool.owner])).toEqual([["echo", "pack"]]);
    expect(t.host.plugins).toMatchObject([{ name: "pack", kind: "plugin", tools: ["echo"] }]);
    await t.dispose();
  });

  it("scopes the logger to the plugin and sends records to the host's sink", async () => {
    const records: LogRecord[] = [];
    const plugin = definePlugin({ name: "chatty", setup: (rein) => rein.logger.warn("careful", 42) });
    const t = await createTestHarness();
    const { loadPlugins } = await import("../src/index.js");
    const host = await loadPlugins(t.harness, [plugin], { logger: (record) => records.push(record) });
    expect(records).toEqual([{ level: "warn", plugin: "chatty", message: "careful", args: [42] }]);
    await host.dispose();
    await t.dispose();
  });
});
