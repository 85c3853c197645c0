/**
 * One wire-capture run: a temp project whose config points a catalogue model at a
 * loopback server (a `models[]` entry over the catalogue model: its API, compat flags and
 * the provider's key variable stay), with one tool and a thinking level; the built `rein
 * run` asks about the weather, the scripted model calls the tool, then answers. Returns
 * the process result and what the session file recorded.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { project, type ReinResult, rein } from "../rein-process.js";
import type { WireServer, WireTurn } from "./recording-server.js";

export const PROMPT = "What is the weather in Paris?";
export const SYSTEM_PROMPT = "You are a weather bot. Use the lookup tool.";
export const ANSWER = "It is sunny in Paris today.";
export const TOOL_RESULT = "sunny in Paris, 21 C";

/** The tool as a provider should see it: name, description and JSON schema of its parameters. */
export const LOOKUP_TOOL = {
  name: "lookup",
  description: "Look up the weather forecast of a city",
  parameters: {
    type: "object",
    required: ["city"],
    properties: {
      city: { type: "string", description: "City name" },
      days: { type: "integer", minimum: 1 },
    },
  },
};

const TOOLS = `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "weather",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "lookup",
      description: ${JSON.stringify(LOOKUP_TOOL.description)},
      parameters: Type.Object({
        city: Type.String({ description: "City name" }),
        days: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
      risk: "read",
      execute: async (args) => ({ content: [{ type: "text", text: ${JSON.stringify(TOOL_RESULT.replace("Paris", "__CITY__"))}.replace("__CITY__", args.city) }] }),
    }));
  },
});
`;

/**
 * The two turns every family plays: think and call the tool, then answer from the cache.
 * Only Anthropic reports cache writes; the others' first turn writes none.
 */
export function weatherTurns(callId: string, reportsCacheWrites: boolean): WireTurn[] {
  return [
    {
      thinking: "The user wants the weather; I should call lookup.",
      toolCall: { id: callId, name: "lookup", args: { city: "Paris" } },
      usage: {
        input: 1200,
        output: 80,
        cacheRead: 0,
        cacheWrite: reportsCacheWrites ? 1100 : 0,
        reasoning: 30,
      },
    },
    {
      text: ANSWER,
      usage: { input: 60, output: 12, cacheRead: 1100, cacheWrite: 0, reasoning: 0 },
    },
  ];
}

export interface SessionMessage {
  role: string;
  provider?: string;
  model?: string;
  content: { type: string; text?: string; name?: string; arguments?: unknown; id?: string }[];
  usage?: { input: number; output: number; cacheRead: number; cacheWrite: number; totalTokens: number };
  toolName?: string;
  toolCallId?: string;
}

export interface WireRun {
  result: ReinResult;
  messages: SessionMessage[];
}

/** Runs `rein run PROMPT` with `provider/id` served from `baseUrl`, the key in `keyVariable`. */
export async function runAgainst(options: {
  provider: string;
  id: string;
  baseUrl: string;
  keyVariable: string;
  thinkingLevel: string;
  /** More environment (a provider whose credential is more than one variable). */
  env?: Record<string, string>;
}): Promise<WireRun> {
  const { provider, id, baseUrl, keyVariable, thinkingLevel } = options;
  const dir = project({
    "rein.config.ts": `export default {
  model: "${provider}/${id}",
  models: [{ provider: "${provider}", id: "${id}", baseUrl: "${baseUrl}" }],
  plugins: ["./tools.ts"],
  tools: { active: ["lookup"] },
  thinkingLevel: "${thinkingLevel}",
  systemPrompt: ${JSON.stringify(SYSTEM_PROMPT)},
  retry: { enabled: false },
};
`,
    "tools.ts": TOOLS,
  });
  const result = await rein(["run", PROMPT], dir, {
    env: { [keyVariable]: "wire-test-key", ...options.env },
  });
  const folder = join(dir, ".rein", "sessions");
  const files = readdirSync(folder).filter((name) => name.endsWith(".jsonl"));
  expect(files).toHaveLength(1);
  const messages = readFileSync(join(folder, files[0] as string), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line))
    .filter((entry) => entry.type === "message")
    .map((entry) => entry.message as SessionMessage);
  return { result, messages };
}

/** Rein's detailed `User-Agent`, as every HTTP client but the AWS SDK sends it. */
export const REIN_USER_AGENT = /^rein\/\d+\.\d+\.\d+ \([a-z0-9]+; node\/[\d.]+; [a-z0-9]+\)$/;

/**
 * What every family must show: the run succeeded with the streamed answer on stdout, two
 * POSTs to `path` identifying as Rein (`userAgent`), never as pi, the tool call executed
 * and recorded, and each turn's usage recorded as the server reported it.
 */
export function expectRecordedRun(
  run: WireRun,
  server: WireServer,
  expected: { path: string; turns: WireTurn[]; id: string; userAgent?: RegExp },
) {
  const { path, turns, id, userAgent = REIN_USER_AGENT } = expected;
  const { result, messages } = run;
  expect(result.stderr).not.toContain("✗");
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain(ANSWER);
  expect(server.requests).toHaveLength(2);
  for (const request of server.requests) {
    expect(request.method).toBe("POST");
    expect(request.path).toBe(path);
    expect(request.headers["content-type"]).toContain("application/json");
    expect(request.headers["user-agent"]).toMatch(userAgent);
    for (const [name, value] of Object.entries(request.headers)) {
      expect(`${name}: ${value}`).not.toMatch(/\bpi\/|pi\.dev/i);
    }
  }
  const assistant = messages.filter((m) => m.role === "assistant");
  expect(assistant).toHaveLength(2);
  expect(assistant.map((m) => m.model)).toEqual([id, id]);
  const call = assistant[0]?.content.find((block) => block.type === "toolCall");
  expect(call).toMatchObject({ name: "lookup", arguments: { city: "Paris" } });
  const toolResult = messages.find((m) => m.role === "toolResult");
  expect(toolResult).toMatchObject({ toolName: "lookup", toolCallId: call?.id });
  expect(toolResult?.content).toEqual([{ type: "text", text: TOOL_RESULT }]);
  expect(assistant[1]?.content.filter((b) => b.type === "text").map((b) => b.text)).toEqual([ANSWER]);
  assistant.forEach((message, n) => {
    const { input, output, cacheRead, cacheWrite } = turns[n]?.usage ?? {};
    expect(message.usage).toMatchObject({ input, output, cacheRead, cacheWrite });
  });
}
