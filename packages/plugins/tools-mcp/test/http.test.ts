/**
 * Streamable HTTP servers: headers come from ${VAR}s, a refused token is a start
 * failure naming the server. The server is the MCP SDK's own Streamable HTTP
 * transport on 127.0.0.1, checking a bearer token.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config syntax that Rein expands, not a template.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import mcp, { type McpStatus, readMcpStatus } from "../src/index.js";

let http: HttpServer;
let url: string;
let t: TestHarness | undefined;

beforeAll(async () => {
  http = createServer(async (req, res) => {
    if (req.headers.authorization !== "Bearer s3cret-token") {
      res.writeHead(401).end("unauthorized");
      return;
    }
    // Stateless: a fresh server and transport per request.
    const server = new Server({ name: "http-fixture", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: "whoami",
          description: "says which client called",
          inputSchema: { type: "object", properties: {} },
          annotations: { readOnlyHint: true, openWorldHint: true },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async () => ({
      content: [{ type: "text", text: `hello ${req.headers["user-agent"] ? "client" : "?"}` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
});
afterAll(() => new Promise<void>((resolve) => http.close(() => resolve())));
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  delete process.env.REIN_MCP_TEST_TOKEN;
});

const status = (harness: TestHarness) => readMcpStatus(harness.session.entries()) as McpStatus;

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
    await t.prompt("who");
    const [result] = t.messages().filter((message) => message.role === "toolResult");
    expect(result?.isError).toBe(false);
    expect(JSON.stringify(result?.content)).toContain("hello client");
    // The status names the endpoint, never the header's value.
    expect(status(t).servers[0]).toMatchObject({ name: "remote", state: "ready", transport: `http ${url}` });
    expect(JSON.stringify(t.session.entries())).not.toContain("s3cret-token");
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
