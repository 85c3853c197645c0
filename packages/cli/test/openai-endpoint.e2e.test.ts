import { startOpenAICompatibleServer } from "@rein/sdk/testing";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

describe("a custom OpenAI-compatible endpoint on loopback", { timeout: 60_000 }, () => {
  it("streams a tool call and an answer through pi-ai's real client, with the tool result sent back", async () => {
    const server = await startOpenAICompatibleServer([
      { toolCall: { name: "echo", args: { text: "over http" }, id: "call_1" } },
      { text: "The echo said: over http." },
    ]);
    try {
      const dir = project({
        "rein.config.ts": `export default {
  model: "local-model",
  models: [{ id: "local-model", baseUrl: "${server.baseUrl}", api: "openai-completions", contextWindow: 8192 }],
  plugins: ["./tools.ts"],
};
`,
        "tools.ts": TOOLS_PLUGIN,
      });
      const result = await rein(["run", "echo something"], dir);
      expect(result.stderr).not.toContain("rein:");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("The echo said: over http.");
      expect(server.requests).toHaveLength(2);
      expect(server.requests[0]).toMatchObject({ model: "local-model", stream: true });
      const tools = server.requests[0]?.tools as { function: { name: string } }[];
      expect(tools.map((t) => t.function.name)).toEqual(["echo", "wait", "push"]);
      const second = server.requests[1]?.messages as {
        role: string;
        tool_call_id?: string;
        content?: unknown;
      }[];
      const toolMessage = second.find((m) => m.role === "tool");
      expect(toolMessage).toMatchObject({ tool_call_id: "call_1" });
      expect(JSON.stringify(toolMessage?.content)).toContain("echo: over http");
    } finally {
      await server.close();
    }
  });
});
