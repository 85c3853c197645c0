/**
 * Streamable HTTP servers: headers come from ${VAR}s, a refused token is a start
 * failure naming the server, and both protocol eras work: a v2 SDK endpoint
 * (`createMcpHandler`, 2026-07-28 and stateless 2025-11-25) on 127.0.0.1 checking a
 * bearer token, and server-everything's own Streamable HTTP mode (a real server
 * from npm on the 1.x SDK, so 2025-11-25 only).
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config syntax that Rein expands, not a template.
import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpHandler, Server } from "@modelcontextprotocol/server";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import mcp, { type McpStatus, readMcpStatus } from "../src/index.js";
import { nodeListener, serverScript, until } from "./helpers.js";

let http: HttpServer;
let url: string;
let t: TestHarness | undefined;

const handler = createMcpHandler(({ era }) => {
  const server = new Server({ name: "http-fixture", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler("tools/list", async () => ({
    tools: [
      {
        name: "whoami",
        description: "says which era called",
        inputSchema: { type: "object", properties: {} },
        annotations: { readOnlyHint: true, openWorldHint: true },
      },
    ],
  }));
  server.setRequestHandler("tools/call", async () => ({ content: [{ type: "text", text: `hello ${era}` }] }));
  return server;
});

beforeAll(async () => {
  const serve = nodeListener(handler.fetch);
  http = createServer((req, res) => {
    if (req.headers.authorization !== "Bearer s3cret-token") {
      res.writeHead(401).end("unauthorized");
      return;
    }
    serve(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await handler.close();
  await new Promise<void>((resolve) => {
    http.closeAllConnections();
    http.close(() => resolve());
  });
});
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  delete process.env.REIN_MCP_TEST_TOKEN;
});

const status = (harness: TestHarness) => readMcpStatus(harness.session.entries()) as McpStatus;
const whoami = async (harness: TestHarness) => {
  await harness.prompt("who");
  const [result] = harness.messages().filter((message) => message.role === "toolResult");
  return result;
};

describe("Streamable HTTP servers", () => {
  it("sends headers expanded from the environment and calls the tool; openWorldHint makes it network", async () => {
    process.env.REIN_MCP_TEST_TOKEN = "s3cret-token";
    t = await createTestHarness({
      plugins: [
        [mcp, { servers: { remote: { url, headers: { Authorization: "Bearer ${REIN_MCP_TEST_TOKEN}" } } } }],
      ],
      script: [{ toolCalls: [{ name: "mcp__remote__whoami" }] }, "done"],
    });
    expect(t.harness.tools.find((tool) => tool.name === "mcp__remote__whoami")?.risk).toBe("network");
    const result = await whoami(t);
    expect(result?.isError).toBe(false);
    // A v2 endpoint: the default negotiation lands on 2026-07-28.
    expect(JSON.stringify(result?.content)).toContain("hello modern");
    // The status names the endpoint, never the header's value.
    expect(status(t).servers[0]).toMatchObject({
      name: "remote",
      state: "ready",
      transport: `http ${url}`,
      protocolVersion: "2026-07-28",
    });
    expect(JSON.stringify(t.session.entries())).not.toContain("s3cret-token");
  });

  it('protocol "2025-11-25" speaks the 2025 handshake to the same endpoint', async () => {
    process.env.REIN_MCP_TEST_TOKEN = "s3cret-token";
    t = await createTestHarness({
      plugins: [
        [
          mcp,
          {
            servers: {
              remote: {
                url,
                protocol: "2025-11-25",
                headers: { Authorization: "Bearer ${REIN_MCP_TEST_TOKEN}" },
              },
            },
          },
        ],
      ],
      script: [{ toolCalls: [{ name: "mcp__remote__whoami" }] }, "done"],
    });
    const result = await whoami(t);
    expect(JSON.stringify(result?.content)).toContain("hello legacy");
    expect(status(t).servers[0]).toMatchObject({ state: "ready", protocolVersion: "2025-11-25" });
  });

  it("a refused token leaves the server failed with the HTTP status in the reason", async () => {
    process.env.REIN_MCP_TEST_TOKEN = "wrong";
    t = await createTestHarness({
      plugins: [
        [mcp, { servers: { remote: { url, headers: { Authorization: "Bearer ${REIN_MCP_TEST_TOKEN}" } } } }],
      ],
    });
    const [server] = status(t).servers;
    expect(server).toMatchObject({ name: "remote", state: "failed" });
    expect(server?.reason).toMatch(/mcp server "remote" failed to start: .*401/);
    expect(t.harness.tools).toHaveLength(0);
  });
});

describe("a 2025-11-25 server over Streamable HTTP (server-everything on the 1.x SDK)", () => {
  let child: ChildProcess;
  let legacyUrl: string;
  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    child = spawn(process.execPath, [serverScript("server-everything"), "streamableHttp"], {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await until(() => stderr.includes("listening on port"), 15_000, "server-everything to listen");
    legacyUrl = `http://127.0.0.1:${port}/mcp`;
  });
  afterAll(() => {
    child?.kill("SIGKILL");
  });

  it("the default negotiation falls back to the 2025 handshake and calls its tools", async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { old: { url: legacyUrl } } }]],
      script: [{ toolCalls: [{ name: "mcp__old__echo", args: { message: "over http" } }] }, "done"],
    });
    expect(status(t).servers[0]).toMatchObject({ state: "ready", protocolVersion: "2025-11-25" });
    await t.prompt("echo");
    const [result] = t.messages().filter((message) => message.role === "toolResult");
    expect(result?.isError).toBe(false);
    expect(JSON.stringify(result?.content)).toContain("over http");
  });

  it('protocol "2026-07-28" refuses it at start, naming the server', async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { old: { url: legacyUrl, protocol: "2026-07-28" } } }]],
    });
    const [server] = status(t).servers;
    expect(server).toMatchObject({ name: "old", state: "failed" });
    expect(server?.reason).toMatch(/mcp server "old" failed to start: .*2026-07-28/);
  });
});
