/**
 * Option schemas are closed by default: a misspelt key fails with "did you mean",
 * at any depth, unless the author opted out; errors carry the entry's index.
 */
import { describe, expect, it } from "vitest";
import { definePlugin, loadPlugins, resolvePluginOptions, type SdkError, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const Options = Type.Object({
  writable: Type.Array(Type.String(), { default: [] }),
  limits: Type.Object({ maxBytes: Type.Number({ default: 1024 }) }, { default: {} }),
  mode: Type.Union([Type.Literal("strict"), Type.Literal("lenient")], { default: "strict" }),
});

function capture(schema: Parameters<typeof resolvePluginOptions>[1], raw: unknown): SdkError {
  try {
    resolvePluginOptions("fs", schema, raw);
  } catch (error) {
    return error as SdkError;
  }
  throw new Error("expected invalid options");
}

describe("closed option schemas", () => {
  it("rejects an unknown top-level key and suggests the closest known one", () => {
    const error = capture(Options, { writabel: ["src"] });
    expect(error).toMatchObject({ code: "invalid_options", plugin: "fs", path: "/writabel" });
    expect(error.message).toContain('did you mean "writable"?');
  });

  it("rejects an unknown key in a nested object, with the nested path", () => {
    const error = capture(Options, { limits: { maxBtyes: 5 } });
    expect(error).toMatchObject({ code: "invalid_options", path: "/limits/maxBtyes" });
    expect(error.message).toContain('did you mean "maxBytes"?');
  });

  it("offers no suggestion for a key unlike any option", () => {
    const error = capture(Options, { zzzzzzzz: 1 });
    expect(error).toMatchObject({ code: "invalid_options", path: "/zzzzzzzz" });
    expect(error.message).not.toContain("did you mean");
  });

  it("names the choices of a union of literals and the closest one", () => {
    const error = capture(Options, { mode: "strcit" });
    expect(error).toMatchObject({ code: "invalid_options", path: "/mode" });
    expect(error.message).toContain(
      'expected one of "strict" | "lenient", got "strcit"; did you mean "strict"?',
    );
  });

  it("leaves a schema open where the author said so", () => {
    const Open = Type.Object({ a: Type.String() }, { additionalProperties: true });
    expect(resolvePluginOptions("p", Open, { a: "x", extra: 1 })).toEqual({ a: "x", extra: 1 });
    const Record = Type.Object({ env: Type.Record(Type.String(), Type.String()) });
    expect(resolvePluginOptions("p", Record, { env: { ANY: "1" } })).toEqual({ env: { ANY: "1" } });
  });

  it("still applies defaults and accepts valid options", () => {
    expect(resolvePluginOptions("p", Options, { writable: ["src"] })).toEqual({
      writable: ["src"],
      limits: { maxBytes: 1024 },
      mode: "strict",
    });
  });

  it("marks a load failure with the index of the entry at fault (plugins[i])", async () => {
    const plain = definePlugin({ name: "plain", setup() {} });
    const fs = definePlugin({ name: "fs", options: Options, setup() {} });
    const t = await createTestHarness();
    await expect(loadPlugins(t.harness, [plain, [fs, { writabel: [] }]])).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "fs",
      path: "/writabel",
      index: 1,
    });
    await t.dispose();
  });
});

describe("unknown hook names", () => {
  it("fail at setup naming the plugin, the hook, the closest hook and the plugin's own source line", async () => {
    const typo = definePlugin({
      name: "typo",
      setup(rein) {
        (rein.hooks as unknown as Record<string, { tap: () => void }>).toolgate?.tap();
      },
    });
    const t = await createTestHarness();
    const failure = await loadPlugins(t.harness, [definePlugin({ name: "ok", setup() {} }), typo]).catch(
      (error: SdkError) => error,
    );
    expect(failure).toMatchObject({ code: "invalid_plugin", plugin: "typo", hook: "toolgate", index: 1 });
    expect((failure as SdkError).message).toContain('did you mean "toolGate"?');
    expect((failure as SdkError).message).toMatch(/closed-options\.test\.ts:\d+:\d+/);
    expect(t.harness.hooks.toolGate.taps).toHaveLength(0);
    await t.dispose();
  });

  it("lets known hooks and generic probes (await, JSON) through", async () => {
    const plugin = definePlugin({
      name: "fine",
      async setup(rein) {
        rein.hooks.toolGate.tap("fine", () => undefined);
        expect((rein.hooks as unknown as { then?: unknown }).then).toBeUndefined();
        expect(Object.keys(rein.hooks)).toContain("toolGate");
      },
    });
    const t = await createTestHarness({ plugins: [plugin] });
    expect(t.harness.hooks.toolGate.taps.map((tap) => tap.name)).toEqual(["fine"]);
    await t.dispose();
  });
});
