import { describe, expect, it } from "vitest";
import { definePlugin, defineTool, loadPlugins, type PluginHostEntry, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const tool = (name: string) =>
  defineTool({
    name,
    description: `${name} tool`,
    parameters: Type.Object({}),
    execute: () => ({ content: [{ type: "text", text: name }] }),
  });

const registering = (name: string, toolName: string) =>
  definePlugin({
    name,
    setup(rein) {
      rein.hooks.toolGate.tap(name, () => undefined);
      rein.registerTool(tool(toolName));
    },
  });

const tapCount = (harness: { hooks: Record<string, { taps: unknown[] }> }) =>
  Object.values(harness.hooks).reduce((sum, hook) => sum + hook.taps.length, 0);

describe("loading plugins", () => {
  it("rejects two plugins registering the same tool, naming both, and leaves the harness clean", async () => {
    const t = await createTestHarness();
    await expect(
      loadPlugins(t.harness, [registering("fs-a", "read"), registering("fs-b", "read")]),
    ).rejects.toMatchObject({ code: "duplicate_tool", plugin: "fs-b", otherPlugin: "fs-a", tool: "read" });
    expect(t.harness.tools).toEqual([]);
    expect(tapCount(t.harness as never)).toBe(0);
    await t.dispose();
  });

  it("rejects a plugin tool that clashes with a tool the harness already had", async () => {
    const t = await createTestHarness({ tools: [tool("read")] });
    await expect(loadPlugins(t.harness, [registering("fs", "read")])).rejects.toMatchObject({
      code: "duplicate_tool",
      plugin: "fs",
      otherPlugin: "harness",
      tool: "read",
    });
    expect(t.harness.tools.map((x) => [x.name, x.owner])).toEqual([["read", undefined]]);
    await t.dispose();
  });

  it("names a tool pack by its index", async () => {
    const t = await createTestHarness();
    const entries: PluginHostEntry[] = [registering("fs", "read"), [tool("ls"), tool("read")]];
    await expect(loadPlugins(t.harness, entries)).rejects.toMatchObject({
      code: "duplicate_tool",
      plugin: "tools[1]",
      otherPlugin: "fs",
    });
    await t.dispose();
  });

  it("loads a tool pack (a plain array of tools)", async () => {
    const t = await createTestHarness({ plugins: [[tool("ls"), tool("grep")]] });
    expect(t.host.plugins).toMatchObject([{ name: "tools[0]", kind: "tool-pack", tools: ["ls", "grep"] }]);
    expect(t.harness.tools.map((x) => x.owner)).toEqual(["tools[0]", "tools[0]"]);
    await t.dispose();
    expect(t.harness.tools).toEqual([]);
  });

  it("rejects two plugins with the same name", async () => {
    const t = await createTestHarness();
    const a = definePlugin({ name: "same", setup: () => undefined });
    await expect(loadPlugins(t.harness, [a, a])).rejects.toMatchObject({
      code: "duplicate_plugin",
      plugin: "same",
    });
    await t.dispose();
  });

  it("wraps a throwing setup as plugin_setup and disposes the plugins already applied", async () => {
    const cleaned: string[] = [];
    const ok = definePlugin({
      name: "ok",
      setup: (rein) => {
        rein.hooks.toolGate.tap("ok", () => undefined);
        return () => void cleaned.push("ok");
      },
    });
    const broken = definePlugin({
      name: "broken",
      setup(rein) {
        rein.hooks.beforeRun.tap("broken", (payload) => payload);
        throw new Error("no config file");
      },
    });
    const t = await createTestHarness();
    const error = await loadPlugins(t.harness, [ok, broken]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "plugin_setup", plugin: "broken" });
    expect((error as Error).cause).toBeInstanceOf(Error);
    expect(cleaned).toEqual(["ok"]);
    expect(tapCount(t.harness as never)).toBe(0);
    await t.dispose();
  });

  it("awaits an async setup and applies plugins in order (tap order within a stage)", async () => {
    const order: string[] = [];
    const make = (name: string) =>
      definePlugin({
        name,
        async setup(rein) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          rein.hooks.toolGate.tap(name, () => {
            order.push(name);
            return undefined;
          });
        },
      });
    const t = await createTestHarness({
      plugins: [make("one"), make("two"), make("three")],
      tools: [tool("t")],
    });
    await t.checkToolCall({ name: "t" });
    expect(order).toEqual(["one", "two", "three"]);
    await t.dispose();
  });

  it("rejects entries that are not plugins, naming the position", async () => {
    const t = await createTestHarness();
    await expect(loadPlugins(t.harness, ["@rein/tools-fs" as never])).rejects.toMatchObject({
      code: "invalid_plugin",
    });
    await expect(
      loadPlugins(t.harness, [[tool("a"), { name: "not a tool" }] as never]),
    ).rejects.toMatchObject({
      code: "invalid_plugin",
      plugin: "tools[0]",
    });
    await t.dispose();
  });

  it("refuses hook interceptors (they could not be attributed or removed)", async () => {
    const plugin = definePlugin({
      name: "sneaky",
      setup: (rein) => rein.hooks.toolGate.intercept({ register: (tap) => tap }),
    });
    const t = await createTestHarness();
    await expect(loadPlugins(t.harness, [plugin])).rejects.toMatchObject({
      code: "unsupported",
      plugin: "sneaky",
    });
    await t.dispose();
  });
});

describe("definePlugin", () => {
  it("rejects a name with ':' (it separates plugin and rule in `by`)", () => {
    expect(() => definePlugin({ name: "a:b", setup: () => undefined })).toThrow(
      expect.objectContaining({ code: "invalid_plugin" }),
    );
  });

  it("rejects a missing setup and reserved names", () => {
    expect(() => definePlugin({ name: "x" } as never)).toThrow(
      expect.objectContaining({ code: "invalid_plugin", plugin: "x" }),
    );
    expect(() => definePlugin({ name: "harness", setup: () => undefined })).toThrow(
      expect.objectContaining({ code: "invalid_plugin" }),
    );
  });

  it("accepts scoped npm-style names", () => {
    expect(definePlugin({ name: "@acme/rein-policy", setup: () => undefined }).name).toBe(
      "@acme/rein-policy",
    );
  });
});
