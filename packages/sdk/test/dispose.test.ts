import { describe, expect, it } from "vitest";
import { definePlugin, defineTool, loadPlugins, type Rein, type SdkError, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const tool = (name: string) =>
  defineTool({
    name,
    description: `${name} tool`,
    parameters: Type.Object({}),
    execute: () => ({ content: [{ type: "text", text: name }] }),
  });

/** A plugin that taps every kind of hook, listens, registers a tool, and records its cleanup. */
const fullPlugin = (name: string, log: string[]) =>
  definePlugin({
    name,
    setup(rein) {
      rein.hooks.toolGate.tap(name, () => undefined);
      rein.hooks.beforeRequest.tapPromise(name, async (payload) => payload);
      rein.hooks.toolResult.tapAsync(name, (result, _context, callback) => callback(null, result));
      rein.on("agent_end", () => undefined);
      rein.subscribe(() => undefined);
      rein.registerTool(tool(`${name.replaceAll("-", "_")}_tool`));
      rein.onDispose(() => void log.push(`${name}:onDispose`));
      return async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`${name}:cleanup`);
      };
    },
  });

const tapCount = (harness: { hooks: Record<string, { taps: unknown[] }> }) =>
  Object.values(harness.hooks).reduce((sum, hook) => sum + hook.taps.length, 0);

describe("dispose", () => {
  it("removes taps, listeners and tools, and awaits cleanups in reverse order", async () => {
    const log: string[] = [];
    const t = await createTestHarness();
    const host = await loadPlugins(t.harness, [fullPlugin("first", log), fullPlugin("second", log)]);
    expect(tapCount(t.harness as never)).toBe(6);
    expect(t.harness.tools.map((x) => x.name)).toEqual(["first_tool", "second_tool"]);
    expect(host.plugins.map((p) => [p.name, p.taps.length, p.listeners])).toEqual([
      ["first", 3, 2],
      ["second", 3, 2],
    ]);

    await host.dispose();

    expect(log).toEqual(["second:cleanup", "second:onDispose", "first:cleanup", "first:onDispose"]);
    expect(tapCount(t.harness as never)).toBe(0);
    expect(t.harness.tools).toEqual([]);
    expect(host.plugins).toEqual([]);
    expect(host.disposed).toBe(true);
    await t.dispose();
  });

  it("a plugin's tap returns a disposer removing exactly that tap, by identity", async () => {
    let untap: () => void = () => undefined;
    const plugin = definePlugin({
      name: "twice",
      setup(rein) {
        untap = rein.hooks.toolGate.tap("first rule", () => undefined);
        rein.hooks.toolGate.tap("second rule", () => undefined);
      },
    });
    const t = await createTestHarness();
    const host = await loadPlugins(t.harness, [plugin]);
    expect(t.harness.hooks.toolGate.taps.map((tap) => tap.name)).toEqual(["twice", "twice"]);
    untap();
    untap();
    expect(t.harness.hooks.toolGate.taps).toHaveLength(1);
    expect(host.plugins[0]?.taps.map((tap) => tap.label)).toEqual(["second rule"]);
    await host.dispose();
    expect(t.harness.hooks.toolGate.taps).toHaveLength(0);
    await t.dispose();
  });

  it("stops delivering events to a disposed plugin's listeners", async () => {
    const seen: string[] = [];
    const plugin = definePlugin({
      name: "watcher",
      setup: (rein) => void rein.subscribe((e) => void seen.push(e.type)),
    });
    const t = await createTestHarness({ script: ["one", "two"] });
    const host = await loadPlugins(t.harness, [plugin]);
    await t.prompt("a");
    const count = seen.length;
    expect(count).toBeGreaterThan(0);
    await host.dispose();
    await t.prompt("b");
    expect(seen.length).toBe(count);
    await t.dispose();
  });

  it("attempts every plugin even when a cleanup throws, then rejects with all failures", async () => {
    const log: string[] = [];
    const failing = definePlugin({
      name: "failing",
      setup: (rein) => {
        rein.hooks.toolGate.tap("failing", () => undefined);
        return () => {
          throw new Error("cleanup broke");
        };
      },
    });
    const t = await createTestHarness();
    const host = await loadPlugins(t.harness, [fullPlugin("a", log), failing, fullPlugin("b", log)]);
    const error = (await host.dispose().catch((e: unknown) => e)) as SdkError;
    expect(error).toMatchObject({ code: "plugin_cleanup", plugin: "failing" });
    expect(error.errors?.map((e) => e.plugin)).toEqual(["failing"]);
    expect(log).toEqual(["b:cleanup", "b:onDispose", "a:cleanup", "a:onDispose"]);
    // The failing plugin's taps are gone too.
    expect(tapCount(t.harness as never)).toBe(0);
    await t.dispose();
  });

  it("is idempotent", async () => {
    let cleanups = 0;
    const plugin = definePlugin({ name: "once", setup: () => () => void cleanups++ });
    const t = await createTestHarness();
    const host = await loadPlugins(t.harness, [plugin]);
    await Promise.all([host.dispose(), host.dispose()]);
    await host.dispose();
    expect(cleanups).toBe(1);
    await t.dispose();
  });

  it("refuses registrations through a disposed plugin's rein object", async () => {
    let saved: Rein | undefined;
    const plugin = definePlugin({
      name: "late",
      setup: (rein) => {
        saved = rein;
      },
    });
    const t = await createTestHarness();
    const host = await loadPlugins(t.harness, [plugin]);
    await host.dispose();
    expect(() => saved?.hooks.toolGate.tap("late", () => undefined)).toThrow(
      expect.objectContaining({ code: "plugin_disposed", plugin: "late" }),
    );
    expect(() => saved?.registerTool(tool("x"))).toThrow(
      expect.objectContaining({ code: "plugin_disposed" }),
    );
    expect(() => saved?.on("settled", () => undefined)).toThrow(
      expect.objectContaining({ code: "plugin_disposed" }),
    );
    await t.dispose();
  });

  it("returns disposers from on, subscribe and registerTool", async () => {
    let disposers: (() => void)[] = [];
    const plugin = definePlugin({
      name: "manual",
      setup(rein) {
        disposers = [
          rein.on("settled", () => undefined),
          rein.subscribe(() => undefined),
          rein.registerTool(tool("t1")),
        ];
      },
    });
    const t = await createTestHarness();
    const host = await loadPlugins(t.harness, [plugin]);
    expect(host.plugins[0]).toMatchObject({ listeners: 2, tools: ["t1"] });
    for (const dispose of disposers) dispose();
    expect(host.plugins[0]).toMatchObject({ listeners: 0, tools: [] });
    expect(t.harness.tools).toEqual([]);
    await host.dispose();
    await t.dispose();
  });

  it("drops a removed tool from an explicit active-tool list", async () => {
    const plugin = definePlugin({ name: "pack", setup: (rein) => void rein.registerTool(tool("extra")) });
    const t = await createTestHarness({ tools: [tool("base")] });
    const host = await loadPlugins(t.harness, [plugin]);
    t.harness.setActiveTools(["base", "extra"]);
    await host.dispose();
    expect(t.harness.tools.map((x) => x.name)).toEqual(["base"]);
    expect(t.harness.activeToolNames).toEqual(["base"]);
    await t.dispose();
  });

  it("restores the default tool verdict a plugin set", async () => {
    const plugin = definePlugin({ name: "strict", setup: (rein) => rein.setDefaultToolVerdict("ask") });
    const t = await createTestHarness({ tools: [tool("t")] });
    const host = await loadPlugins(t.harness, [plugin]);
    expect(t.harness.defaultToolVerdict).toBe("ask");
    expect(await t.checkToolCall({ name: "t" }, { skipPermission: true })).toMatchObject({
      decision: "ask",
      by: "harness:default",
    });
    await host.dispose();
    expect(t.harness.defaultToolVerdict).toBe("allow");
    await t.dispose();
  });
});
