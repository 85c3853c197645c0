/**
 * Without a `models` collection the harness streams through pi-ai's built-in providers,
 * each loaded from its own module on the first request; only pi-ai's provider modules
 * are ever loaded, and only a factory whose provider has the requested id is used.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { AgentHarness } from "../src/harness/agent-harness.js";
import { loadBuiltinProvider } from "../src/models/builtin-models.js";
import { reinIdentity } from "../src/models/rein-identity.js";
import { MemoryStorage } from "../src/session/memory-storage.js";
import { Session } from "../src/session/session.js";

describe("built-in providers, loaded by id", () => {
  it("loads a provider from its own module, with the catalogue's current models", async () => {
    const anthropic = await loadBuiltinProvider("anthropic");
    expect(anthropic?.id).toBe("anthropic");
    expect(anthropic?.getModels().map((m) => m.id)).toContain("claude-opus-5-5");
    expect((await loadBuiltinProvider("openai"))?.getModels().map((m) => m.id)).toContain("gpt-6.2-sol");
    expect((await loadBuiltinProvider("google"))?.getModels().map((m) => m.id)).toContain("gemini-4-argon");
    expect((await loadBuiltinProvider("amazon-bedrock"))?.id).toBe("amazon-bedrock");
  });

  it.each([
    ["no-such-provider"],
    ["all"], // the catalogue module: its re-exported radius factory is not "all"
    ["faux"], // a test helper, not a provider factory
    ["model-schema"],
    ["../models"],
    ["Anthropic"],
    [""],
  ])("%j is no built-in provider", async (id) => {
    expect(await loadBuiltinProvider(id)).toBeUndefined();
  });

  it("identifies requests as Rein: a rein/<version> User-Agent and attribution naming Rein", () => {
    const identity = reinIdentity();
    expect(identity.userAgent).toEqual({ custom: expect.stringMatching(/^rein\/\d+\.\d+\.\d+ \(/) });
    expect(identity.attribution).toMatchObject({ name: "rein" });
  });
});

describe("a harness without a models collection", () => {
  it("sends a catalogue model's request through its built-in provider, as Rein", async () => {
    const requests: { url: string; userAgent: string | undefined; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        requests.push({ url: req.url ?? "", userAgent: req.headers["user-agent"], body });
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: "recorded" } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const anthropic = await loadBuiltinProvider("anthropic");
      const catalogue = anthropic?.getModels().find((m) => m.id === "claude-opus-5-5");
      if (!catalogue) throw new Error("the catalogue has no anthropic/claude-opus-5-5");
      const port = (server.address() as AddressInfo).port;
      const model = { ...catalogue, baseUrl: `http://127.0.0.1:${port}` };
      const harness = new AgentHarness({
        session: Session.create(new MemoryStorage()),
        model,
        requestOptions: { apiKey: "test-key", maxRetries: 0 },
        retry: { enabled: false },
      });
      const outcome = await harness.prompt("hi");
      expect(outcome.status).toBe("error");
      expect(requests).toHaveLength(1);
      expect(requests[0]?.url).toContain("/v1/messages");
      expect(requests[0]?.userAgent).toMatch(/^rein\//);
      expect(JSON.parse(requests[0]?.body ?? "{}")).toMatchObject({ model: "claude-opus-5-5", stream: true });
    } finally {
      server.close();
    }
  });

  it("a model of a provider pi-ai does not have ends the run with an error message, not a crash", async () => {
    const harness = new AgentHarness({
      session: Session.create(new MemoryStorage()),
      model: {
        id: "m",
        name: "m",
        api: "openai-completions",
        provider: "no-such-provider",
        baseUrl: "http://127.0.0.1:9",
        reasoning: false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: 1000,
        maxTokens: 100,
      },
      retry: { enabled: false },
    });
    const outcome = await harness.prompt("hi");
    expect(outcome.status).toBe("error");
    const last = harness.session.buildContext().messages.at(-1);
    expect(last).toMatchObject({ role: "assistant", stopReason: "error" });
  });
});
