import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type CustomModelConfig,
  defineConfig,
  definePlugin,
  defineTool,
  type PluginOptionsInput,
  plugin,
  type ReinConfig,
  Type,
} from "../src/index.js";

describe("defineConfig", () => {
  it("returns the config unchanged and accepts every plugin entry form", () => {
    const inline = definePlugin({
      name: "inline",
      options: Type.Object({ n: Type.Number() }),
      setup: () => undefined,
    });
    const ls = defineTool({
      name: "ls",
      description: "list",
      parameters: Type.Object({}),
      execute: () => ({ content: [] }),
    });
    const local: CustomModelConfig = {
      id: "llama3",
      baseUrl: "http://127.0.0.1:11434/v1",
      api: "openai-completions",
    };
    const config: ReinConfig = {
      model: { script: ["hello", { toolCalls: [{ name: "ls", args: {} }] }] },
      models: [local],
      plugins: [
        "@rein/tools-fs",
        ["@rein/plugin-policy", { rules: [] }],
        "./plugins/house.ts",
        inline,
        [inline, { n: 1 }],
        [ls],
      ],
      tools: { active: ["ls"] },
      session: { dir: ".rein/sessions" },
      systemPrompt: "be careful",
      thinkingLevel: "low",
    };
    expect(defineConfig(config)).toBe(config);
    // @ts-expect-error thinkingLevel is one of the harness's levels.
    defineConfig({ thinkingLevel: "extreme" });
  });
});

describe("plugin(imported, options)", () => {
  const typed = definePlugin({
    name: "typed",
    options: Type.Object({
      mode: Type.Union([Type.Literal("fast"), Type.Literal("safe")], { default: "safe" }),
      limits: Type.Object({ max: Type.Number() }),
      names: Type.Array(Type.String(), { default: [] }),
    }),
    setup: () => undefined,
  });

  it("is the [plugin, options] tuple, so the CLI loads it like a hand-written one", () => {
    const entry = plugin(typed, { mode: "fast", names: ["a"] });
    expect(entry).toEqual([typed, { mode: "fast", names: ["a"] }]);
    expect(entry[0]).toBe(typed);
    expect(defineConfig({ plugins: [entry] }).plugins?.[0]).toBe(entry);
  });

  it("types the options from the plugin's schema", () => {
    expectTypeOf<PluginOptionsInput<typeof typed>>().toEqualTypeOf<{
      mode?: "fast" | "safe";
      limits?: { max?: number };
      names?: readonly string[];
    }>();
    // @ts-expect-error "slow" is not one of the mode literals.
    plugin(typed, { mode: "slow" });
    // @ts-expect-error limits.max is a number.
    plugin(typed, { limits: { max: "ten" } });
    // @ts-expect-error an option the schema does not declare.
    plugin(typed, { mood: "fast" });
  });
});
