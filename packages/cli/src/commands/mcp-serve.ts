/**
 * `rein mcp serve`: Rein as an MCP server. The configured tool stack (Rein's own
 * packs and upstream MCP servers alike) is offered to any MCP client, every call
 * going through the configured plugins (see mcp-gateway.ts) and recorded in a
 * new session, named on stderr, so `rein replay <session>` re-decides the calls.
 *
 * Invariants: over stdio, stdout carries the protocol and nothing else (anything
 * else written to stdout goes to stderr); over HTTP, the server listens on
 * 127.0.0.1 only and every request needs the bearer token. The configured model
 * is never called: a scripted stand-in emits the client's calls.
 */
import { Writable } from "node:stream";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { buildAgent } from "../agent/build-agent.js";
import { type WrittenAt, whereWritten } from "../config/value-origin.js";
import { configError, ExitCode, usageError } from "../errors.js";
import { type GlobalOptions, version } from "../program.js";
import { ToolGateway } from "./mcp-gateway.js";

export interface McpServeOptions {
  http?: string;
  tokenEnv?: string;
  hideDenied?: boolean;
}

const INSTRUCTIONS =
  "These tools run through a Rein agent's gates: policy rules, permissions, budgets, audit and redaction. " +
  "A denied call comes back as an error result whose text says why and which rule decided; do not retry it unchanged.";

/** `mcpServe` from the config: `{ hideDenied?: boolean }`. */
function serveSettings(config: Record<string, unknown>, fields: WrittenAt) {
  const raw = config.mcpServe;
  if (raw === undefined) return { hideDenied: false };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw configError("mcpServe: expected { hideDenied?: boolean }", fields);
  }
  for (const [key, value] of Object.entries(raw)) {
    if (key !== "hideDenied")
      throw configError(`mcpServe.${key}: unknown option (known: hideDenied)`, fields);
    if (typeof value !== "boolean") throw configError("mcpServe.hideDenied: expected a boolean", fields);
  }
  return { hideDenied: (raw as { hideDenied?: boolean }).hideDenied ?? false };
}

/** One MCP `Server` answering from the gateway; one per client connection. */
export function createMcpServer(gateway: ToolGateway): Server {
  const server = new Server(
    { name: "rein", version: version() },
    { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: await gateway.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    gateway.call(
      request.params.name,
      (request.params.arguments ?? {}) as Record<string, unknown>,
      extra.signal,
    ),
  );
  return server;
}

/**
 * Keeps stdin and stdout to the protocol: other writes to process.stdout go to
 * stderr, and stdin never counts as a terminal, so no plugin prompts on it (an ask
 * is then denied with its reason, even when someone runs this in a terminal).
 */
function claimStdio(): Writable {
  Object.defineProperty(process.stdin, "isTTY", { value: false, configurable: true });
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
  return new Writable({
    write(chunk, _encoding, callback) {
      write(chunk, callback);
    },
  });
}

export async function mcpServeCommand(options: McpServeOptions, globals: GlobalOptions): Promise<number> {
  const port = options.http === undefined ? undefined : Number(options.http);
  if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
    throw usageError(`--http ${options.http}: expected a port number (0 picks a free one)`);
  }
  const protocolOut = port === undefined ? claimStdio() : undefined;
  const agent = await buildAgent({ cwd: globals.cwd, configPath: globals.config, script: [] });
  const scripted = agent.model.scripted;
  if (!scripted) throw new Error("internal: rein mcp serve needs its scripted stand-in model");
  // Each call is a short run of its own: summarising the calls would only cost time.
  agent.harness.setCompactionSettings({ enabled: false });
  // Errors name the layer file that wrote mcpServe, which need not be the project's.
  const where = whereWritten(agent.loaded, "mcpServe");
  const settings = serveSettings(agent.loaded.config as Record<string, unknown>, where);
  const gateway = new ToolGateway(agent.harness, scripted, {
    hideDenied: options.hideDenied === true || settings.hideDenied,
  });
  const servers = new Set<Server>();
  const unlisten = agent.harness.on(
    "config_change",
    (event) => {
      if (event.key !== "tools" && event.key !== "activeTools") return;
      for (const server of servers) void server.sendToolListChanged().catch(() => undefined);
    },
    { owner: "rein mcp serve" },
  );
  process.stderr.write(
    `rein mcp serve: session ${agent.session.id} (replay with: rein replay ${agent.session.id.slice(0, 8)})\n`,
  );

  let stop: () => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  process.once("SIGINT", () => stop());
  process.once("SIGTERM", () => stop());
  let closeHttp: (() => Promise<void>) | undefined;
  try {
    if (port === undefined) {
      const server = createMcpServer(gateway);
      servers.add(server);
      server.onclose = () => stop();
      await server.connect(new StdioServerTransport(process.stdin, protocolOut));
      process.stdin.once("end", () => stop());
    } else {
      const { serveHttp } = await import("./mcp-http.js");
      const http = await serveHttp({
        port,
        host: "127.0.0.1",
        tokenEnv: options.tokenEnv,
        newServer: () => {
          const server = createMcpServer(gateway);
          servers.add(server);
          server.onclose = () => servers.delete(server);
          return server;
        },
      });
      closeHttp = http.close;
      process.stderr.write(`rein mcp serve: listening on ${http.url} (Authorization: Bearer <token>)\n`);
      if (http.generatedToken) process.stderr.write(`rein mcp serve: token ${http.generatedToken}\n`);
    }
    await stopped;
  } finally {
    unlisten();
    await closeHttp?.();
    for (const server of servers) await server.close().catch(() => undefined);
    await agent.dispose();
  }
  return ExitCode.ok;
}
