import { describe, expect, it } from "vitest";
import { definePlugin, loadPlugins, resolvePluginOptions, type SdkError, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const Options = Type.Object({
  paths: Type.Array(Type.String()),
  mode: Type.String({ default: "strict" }),
  limits: Type.Object({ maxBytes: Type.Number({ default: 1024 }), label: Type.String() }),
});

function capture(plugin: string, raw: unknown): SdkError {
  try {
    resolvePluginOptions(plugin, Options, raw);
  } catch (error) {
    return error as SdkError;
  }
  throw new Error("expected invalid options");
}

describe("plugin options", () => {
  it("reports a missing required option with its path", () => {
    expect(capture("no-secrets", { limits: { label: "x" } })).toMatchObject({
      code: "invalid_options",
      plugin: "no-secrets",
      path: "/paths",
    });
  });

  it("reports a wrong type inside an array with the element's path, expected and actual type", () => {
    const error = capture("no-secrets", { paths: [1], limits: { label: "x" } });
    expect(error).toMatchObject({ code: "invalid_options", plugin: "no-secrets", path: "/paths/0" });
    // The one message the issue spells out, pinned once.
    expect(error.message).toBe('plugin "no-secrets": option /paths/0 expected string, got number');
  });

  it("reports a nested path for a nested object", () => {
    expect(capture("p", { paths: [], limits: { label: 3 } })).toMatchObject({ path: "/limits/label" });
    expect(capture("p", { paths: [] })).toMatchObject({ path: "/limits" });
  });

  it("applies schema defaults before checking", () => {
    const options = resolvePluginOptions("p", Options, { paths: ["a"], limits: { label: "l" } });
    expect(options).toEqual({ paths: ["a"], mode: "strict", limits: { maxBytes: 1024, label: "l" } });
  });

  it("treats omitted options on an object schema as all-defaults", () => {
    const schema = Type.Object({ level: Type.Number({ default: 3 }) });
    expect(resolvePluginOptions("p", schema, undefined)).toEqual({ level: 3 });
  });

  it("does not mutate the options object it was given", () => {
    const raw = { paths: ["a"], limits: { label: "l" } };
    resolvePluginOptions("p", Options, raw);
    expect(raw).toEqual({ paths: ["a"], limits: { label: "l" } });
  });

  it("hands setup the validated options with defaults, typed from the schema", async () => {
    let seen: unknown;
    const plugin = definePlugin({
      name: "typed",
      options: Options,
      setup(_rein, options) {
        seen = options;
        const mode: string = options.mode;
        const max: number = options.limits.maxBytes;
        // @ts-expect-error options are typed from the schema: there is no `missing` option.
        options.missing;
        void mode;
        void max;
      },
    });
    const t = await createTestHarness({ plugins: [[plugin, { paths: [], limits: { label: "x" } }]] });
    expect(seen).toEqual({ paths: [], mode: "strict", limits: { maxBytes: 1024, label: "x" } });
    await t.dispose();
  });

  it("fails loading before any plugin is applied when a later plugin's options are invalid", async () => {
    let setups = 0;
    const good = definePlugin({ name: "good", setup: () => void setups++ });
    const bad = definePlugin({ name: "bad", options: Options, setup: () => void setups++ });
    const t = await createTestHarness();
    await expect(loadPlugins(t.harness, [good, [bad, { paths: "nope" }]])).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "bad",
    });
    expect(setups).toBe(0);
    await t.dispose();
  });

  it("passes options through untouched for a plugin without a schema", async () => {
    let seen: unknown = "unset";
    const plugin = definePlugin({
      name: "plain",
      setup: (_rein, options) => {
        seen = options;
      },
    });
    const t = await createTestHarness({ plugins: [plugin] });
    expect(seen).toBeUndefined();
    await t.dispose();
  });
});
