import type { AddressInfo } from "node:net";
import { defineTool, Type } from "@rein/sdk";
import { createScriptedModel, type ScriptedModel } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentServer } from "../src/agent-server.js";

const scripted: ScriptedModel[] = [];
afterEach(() => {
  for (const model of scripted.splice(0)) model.dispose();
});

const echo = defineTool({
  name: "echo",
  description: "Echo text",
  parameters: Type.Object({ text: Type.String() }),
  execute: async ({ text }) => ({ content: [{ type: "text", text: `echo: ${text}` }] }),
});

async function post(port: number, prompt: string) {
  const response = await fetch(`http://127.0.0.1:${port}/runs`, {
    method: "POST",
    body: JSON.stringify({ prompt }),
  });
  const text = await response.text();
  const events = text
    .split("\n\n")
    .filter((block) => block.includes("data: "))
    .map(
      (block) =>
        JSON.parse(block.slice(block.indexOf("data: ") + 6)) as { type: string; [k: string]: unknown },
    );
  return { response, events };
}

describe("embedding the harness in a web server", () => {
  it("streams one run's events as server-sent events, each request with its own session", async () => {
    const server = createAgentServer({
      tools: [echo],
      model: () => {
        const model = createScriptedModel([
          { toolCalls: [{ name: "echo", args: { text: "sse" } }] },
          "Streamed.",
        ]);
        scripted.push(model);
        return { model: model.model, models: model.models };
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const [first, second] = await Promise.all([post(port, "one"), post(port, "two")]);
      expect(first.response.headers.get("content-type")).toBe("text/event-stream");
      const types = first.events.map((e) => e.type);
      expect(types).toContain("agent_start");
      expect(types).toContain("tool_execution_end");
      expect(types.at(-1)).toBe("settled");
      const answer = first.events.filter((e) => e.type === "message_end").at(-1) as unknown as {
        message: { content: { text: string }[] };
      };
      expect(answer.message.content[0]?.text).toBe("Streamed.");
      expect(first.response.headers.get("x-rein-session")).not.toBe(
        second.response.headers.get("x-rein-session"),
      );
      expect(second.events.at(-1)?.type).toBe("settled");
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("rejects a request without a prompt", async () => {
    const server = createAgentServer({
      model: () => {
        const model = createScriptedModel([]);
        return { model: model.model, models: model.models };
      },
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/runs`, { method: "POST", body: "{}" });
      expect(response.status).toBe(400);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
