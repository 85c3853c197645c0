/**
 * Models through the built binary: a missing credential names the variables
 * pi-ai actually reads (AWS credentials for Bedrock, not an invented
 * `AMAZON_BEDROCK_API_KEY`); a custom model's temperature, max tokens, reasoning
 * and image input reach the request a loopback endpoint receives; bad values are
 * config errors naming the option.
 */
import { startOpenAICompatibleServer } from "@rein/sdk/testing";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const NO_AWS = Object.fromEntries(
  [
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "COPILOT_GITHUB_TOKEN",
    "GH_TOKEN",
    "GITHUB_TOKEN",
  ].map((name) => [name, ""]),
);

/** A tool whose result is an image, to see whether the model is sent images. */
const IMAGE_TOOL = `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "pictures",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "snap",
      description: "Take a picture",
      parameters: Type.Object({}),
      risk: "read",
      execute: async () => ({ content: [{ type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" }] }),
    }));
  },
});
`;

describe("model credentials and custom model options", { timeout: 60_000 }, () => {
  it.each([
    [
      "amazon-bedrock/amazon.nova-2-lite-v1:0",
      ["AWS_PROFILE", "AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"],
    ],
    // pi-ai 1.x reads only COPILOT_GITHUB_TOKEN (0.73 also took GH_TOKEN and GITHUB_TOKEN).
    ["github-copilot/claude-haiku-4.5", ["COPILOT_GITHUB_TOKEN"]],
  ])("a missing credential for %s names the variables pi-ai reads", async (model, names) => {
    const dir = project({ "rein.config.ts": `export default { model: ${JSON.stringify(model)} };\n` });
    const result = await rein(["run", "hi"], dir, { env: NO_AWS });
    expect(result.code).toBe(2);
    for (const name of names) expect(result.stderr).toContain(name);
    expect(result.stderr).not.toMatch(/AMAZON_BEDROCK_API_KEY|GITHUB_COPILOT_API_KEY/);
  });

  it("rein models shows the same hint", async () => {
    const dir = project({ "rein.config.ts": "export default {};\n" });
    const result = await rein(["models", "--provider", "amazon-bedrock", "--json"], dir, { env: NO_AWS });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY");
  });

  it("temperature, max tokens, reasoning and image input reach the endpoint's request", async () => {
    const server = await startOpenAICompatibleServer([
      { toolCall: { name: "snap", args: {}, id: "call_1" } },
      { text: "a picture" },
    ]);
    const textOnly = await startOpenAICompatibleServer([
      { toolCall: { name: "snap", args: {}, id: "call_1" } },
      { text: "no picture" },
    ]);
    try {
      const config = (baseUrl: string, extra: string) => `export default {
  model: "local",
  models: [{ id: "local", baseUrl: "${baseUrl}", ${extra} }],
  thinkingLevel: "high",
  plugins: ["./pictures.ts"],
};
`;
      const dir = project({
        "rein.config.ts": config(
          server.baseUrl,
          'temperature: 0.2, maxTokens: 1234, reasoning: true, input: ["text", "image"]',
        ),
        "pictures.ts": IMAGE_TOOL,
      });
      const result = await rein(["run", "look"], dir);
      expect(result.stderr).not.toContain("rein:");
      expect(result.code).toBe(0);
      const [first, second] = server.requests as Record<string, unknown>[];
      expect(first?.temperature).toBe(0.2);
      expect(first?.max_completion_tokens ?? first?.max_tokens).toBe(1234);
      expect(first?.reasoning_effort).toBe("high");
      expect(JSON.stringify(second?.messages)).toContain("data:image/png;base64,iVBORw0KGgo=");

      const plain = project({ "rein.config.ts": config(textOnly.baseUrl, ""), "pictures.ts": IMAGE_TOOL });
      expect((await rein(["run", "look"], plain)).code).toBe(0);
      const [plainFirst, plainSecond] = textOnly.requests as Record<string, unknown>[];
      expect(plainFirst?.temperature).toBeUndefined();
      expect(plainFirst?.reasoning_effort).toBeUndefined();
      expect(JSON.stringify(plainSecond?.messages)).not.toContain("data:image/png");
    } finally {
      await server.close();
      await textOnly.close();
    }
  });

  it.each([
    ['input: ["image"]', "models[0].input: expected"],
    ["temperature: 3", "models[0].temperature: expected a number from 0 to 2"],
    ['reasoning: "yes"', "models[0].reasoning: expected a boolean"],
    ["cost: { input: -1 }", "models[0].cost.input: expected dollars per million tokens"],
    ["cost: { prompt: 1 }", "models[0].cost.prompt: expected one of input, output, cacheRead, cacheWrite"],
  ])("a bad custom model option (%s) is a config error naming it", async (option, message) => {
    const dir = project({
      "rein.config.ts": `export default {
  model: "local",
  models: [{ id: "local", baseUrl: "http://127.0.0.1:9/v1", ${option} }],
};
`,
    });
    const result = await rein(["run", "hi"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain("rein.config.ts:3");
  });
});
