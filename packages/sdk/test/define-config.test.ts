import { describe, expect, it } from "vitest";
import {
  type CustomModelConfig,
  defineConfig,
  definePlugin,
  defineTool,
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
