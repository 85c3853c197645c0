/**
 * Talking to a real HTTP endpoint on loopback through the built binary: a long run
 * does not pile listeners on one abort signal; a transient failure is retried by
 * one bounded mechanism (the harness's; the provider client's own retries are
 * off), announced once with attempt counts and the endpoint; a refused connection
 * and a plain 500 are each reported once, naming the endpoint.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { startOpenAICompatibleServer } from "@rein/sdk/testing";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

const endpointConfig = (baseUrl: string, extra = "") => `export default {
  model: "local-model",
  models: [{ id: "local-model", baseUrl: "${baseUrl}", api: "openai-completions", contextWindow: 100000 }],
  plugins: ["./tools.ts"],
  ${extra}
};
`;

/** A loopback server that answers every request with `status`, counting them. */
async function failingServer(status: number) {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    requests++;
    request.resume();
    response.writeHead(status, { "content-type": "application/json" });
    response.end(JSON.stringify({ error: { message: `scripted failure ${status}`, type: "server_error" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const linesMatching = (text: string, pattern: RegExp) =>
  text.split("\n").filter((line) => pattern.test(line));

describe("a model endpoint on loopback", { timeout: 120_000 }, () => {
  it("a run of 50 requests adds no MaxListenersExceededWarning", async () => {
    const replies = Array.from({ length: 49 }, (_, i) => ({
      toolCall: { name: "echo", args: { text: `n${i}` }, id: `call_${i}` },
    }));
    const server = await startOpenAICompatibleServer([...replies, { text: "all fifty done" }]);
    try {
      const dir = project({ "rein.config.ts": endpointConfig(server.baseUrl), "tools.ts": TOOLS_PLUGIN });
      const result = await rein(["run", "go"], dir);
      expect(result.code, result.stderr).toBe(0);
      expect(server.requests).toHaveLength(50);
      expect(result.stdout).toContain("all fifty done");
      expect(result.stderr).not.toContain("MaxListenersExceededWarning");
      expect(result.stderr).not.toMatch(/Warning/);
    } finally {
      await server.close();
    }
  });

  it("a transient failure (503) is retried by the harness only, announced once with attempt counts and the endpoint", async () => {
    const server = await failingServer(503);
    try {
      const dir = project({
        "rein.config.ts": endpointConfig(server.baseUrl, "retry: { maxAttempts: 3, baseDelayMs: 20 },"),
        "tools.ts": TOOLS_PLUGIN,
      });
      const result = await rein(["run", "go"], dir);
      expect(result.code).toBe(1);
      expect(server.requests()).toBe(3); // 3 attempts, each one HTTP request: no hidden client retries
      const announced = linesMatching(result.stderr, /retrying/);
      expect(announced).toHaveLength(1);
      expect(announced[0]).toContain(server.baseUrl);
      expect(announced[0]).toContain("attempt 2 of 3");
      const failures = linesMatching(result.stderr, /model error/);
      expect(failures).toHaveLength(1);
      expect(failures[0]).toContain(server.baseUrl);
      expect(failures[0]).toContain("after 3 attempts");
      expect(result.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await server.close();
    }
  });

  it("a plain 500 is one request and one error line naming the endpoint", async () => {
    const server = await failingServer(500);
    try {
      const dir = project({ "rein.config.ts": endpointConfig(server.baseUrl), "tools.ts": TOOLS_PLUGIN });
      const result = await rein(["run", "go"], dir);
      expect(result.code).toBe(1);
      expect(server.requests()).toBe(1);
      const failures = linesMatching(result.stderr, /500/);
      expect(failures).toHaveLength(1);
      expect(failures[0]).toContain(`model error from ${server.baseUrl}`);
    } finally {
      await server.close();
    }
  });

  it("a refused connection names the endpoint, at once", async () => {
    const baseUrl = `http://127.0.0.1:${await closedPort()}/v1`;
    const dir = project({ "rein.config.ts": endpointConfig(baseUrl), "tools.ts": TOOLS_PLUGIN });
    const started = Date.now();
    const result = await rein(["run", "go"], dir);
    expect(result.code).toBe(1);
    const failures = linesMatching(result.stderr, /model error/);
    expect(failures).toHaveLength(1);
    expect(failures[0]).toContain(`model error from ${baseUrl}`);
    expect(Date.now() - started).toBeLessThan(8_000); // no silent client retries with backoff
  });
});
