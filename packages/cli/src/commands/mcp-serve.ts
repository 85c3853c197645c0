/**
 * `rein mcp serve`: Rein as an MCP server. The configured tool stack (Rein's own
 * packs and upstream MCP servers alike) is offered to any MCP client, every call
 * going through the configured plugins (see mcp-gateway.ts) and recorded in a
 * new session, named on stderr, so `rein replay <session>` re-decides the calls.
 *
 * Invariants: both MCP 2026-07-28 and 2025-era clients are served (the SDK's
 * entries pick the era from the client's opening); over stdio, stdout carries the
 * protocol and nothing else (anything else written to stdout goes to stderr); over
 * HTTP, the server listens on 127.0.0.1 only, refuses foreign browser origins and
 * every request needs the bearer token (see mcp-http.ts). The configured model is
 * never called: a scripted stand-in emits the client's calls.
 */
import { Writable } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { Server } from "@modelcontextprotocol/server";
import { StdioServerTransport, serveStdio } from "@modelcontextprotocol/server/stdio";
import { buildAgent } from "../agent/build-agent.js";
import { type WrittenAt, whereWritten } from "../config/value-origin.js";
import { configError, ExitCode, usageError } from "../errors.js";
import { type GlobalOptions, version } from "../globals.js";
import { ToolGateway } from "../mcp/mcp-gateway.js";
import { normalOrigin } from "../mcp/mcp-origin.js";

export interface McpServeOptions {
  http?: string;
  tokenEnv?: string;
  hideDenied?: boolean;
  /** `--allow-origin`, repeatable: browser origins allowed besides loopback ones. */
  allowOrigin?: string[];
}

const INSTRUCTIONS =
  "These tools run through a Rein agent's gates: policy rules, permissions, budgets, audit and redaction. " +
  "A denied call comes back as an error result whose text says why and which rule decided; do not retry it unchanged.";

const SERVE_KEYS = "hideDenied, allowedOrigins";

/** An origin given in `--allow-origin` or `mcpServe.allowedOrigins`, normalised; a bad one is an error naming it. */
function checkedOrigin(value: unknown, fail: (message: string) => Error, where: string): string {
  const text = typeof value === "string" ? value.replace(/\/$/, "") : undefined;
  const origin = text === undefined ? undefined : normalOrigin(text);
  if (origin === undefined) {
    throw fail(
      `${where}: ${JSON.stringify(value)} is not an origin (expected scheme://host[:port] with http or https, e.g. https://app.example.com)`,
    );
  }
  return origin;
}

/** `mcpServe` from the config: `{ hideDenied?: boolean, allowedOrigins?: string[] }`. */
function serveSettings(config: Record<string, unknown>, fields: WrittenAt) {
  const raw = config.mcpServe;
  if (raw === undefined) return { hideDenied: false, allowedOrigins: [] as string[] };
  const fail = (message: string) => configError(message, fields);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw fail("mcpServe: expected { hideDenied?: boolean, allowedOrigins?: string[] }");
  }
  const settings = { hideDenied: false, allowedOrigins: [] as string[] };
  for (const [key, value] of Object.entries(raw)) {
    if (key === "hideDenied") {
      if (typeof value !== "boolean") throw fail("mcpServe.hideDenied: expected a boolean");
      settings.hideDenied = value;
    } else if (key === "allowedOrigins") {
      if (!Array.isArray(value)) throw fail("mcpServe.allowedOrigins: expected an array of origins");
      settings.allowedOrigins = value.map((item, index) =>
        checkedOrigin(item, fail, `mcpServe.allowedOrigins[${index}]`),
      );
    } else {
      throw fail(`mcpServe.${key}: unknown option (known: ${SERVE_KEYS})`);
    }
  }
  return settings;
}

/** One MCP `Server` answering from the gateway; one per client connection. */
export function createMcpServer(gateway: ToolGateway): Server {
  const server = new Server(
    { name: "rein", version: version() },
    { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler("tools/list", async () => ({ tools: await gateway.list() }));
  server.setRequestHandler("tools/call", async (request, ctx) =>
    gateway.call(
      request.params.name,
      (request.params.arguments ?? {}) as Record<string, unknown>,
      ctx.mcpReq.signal,
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
  const cliOrigins = (options.allowOrigin ?? []).map((value) =>
    checkedOrigin(value, usageError, "--allow-origin"),
  );
  if (port === undefined && cliOrigins.length > 0) {
    throw usageError("--allow-origin only applies with --http (stdio has no origins)");
  }
  const protocolOut = port === undefined ? claimStdio() : undefined;
  // A server allocates steadily, call after call: the bin's fixed young generation (sized
  // for a short run's RSS) made scavenges ~17% of each call's time here; V8's default
  // growth (factor 2) brings it to ~4% for a few MiB more RSS (docs/benchmarks.md).
  setFlagsFromString("--semi-space-growth-factor=2");
  // Group commit: a call's answer goes out once its record is in the OS, not on disk
  // (a crash of this process loses nothing; see the README's "rein mcp serve").
  const agent = await buildAgent({
    cwd: globals.cwd,
    configPath: globals.config,
    script: [],
    durability: "group",
  });
  const scripted = agent.model.scripted;
  if (!scripted) throw new Error("internal: rein mcp serve needs its scripted stand-in model");
  // Each call is a short run of its own: summarising the calls would only cost time.
  agent.harness.setCompactionSettings({ enabled: false });
  // Errors name the layer file that wrote mcpServe, which need not be the project's.
  const where = whereWritten(agent.loaded, "mcpServe");
  let settings: ReturnType<typeof serveSettings>;
  try {
    settings = serveSettings(agent.loaded.config as Record<string, unknown>, where);
  } catch (error) {
    // The agent already started its MCP servers: they must not keep the process alive.
    await agent.dispose();
    throw error;
  }
  const gateway = new ToolGateway(agent.harness, scripted, {
    hideDenied: options.hideDenied === true || settings.hideDenied,
  });
  // Servers that hold a connection (stdio, a 2025-era HTTP session): each is told of list changes.
  const servers = new Set<Server>();
  let toolsChangedHttp: (() => void) | undefined;
  const unlisten = agent.harness.on(
    "config_change",
    (event) => {
      if (event.key !== "tools" && event.key !== "activeTools") return;
      for (const server of servers) void server.sendToolListChanged().catch(() => undefined);
      toolsChangedHttp?.();
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
  let closeStdio: (() => Promise<void>) | undefined;
  try {
    if (port === undefined) {
      // serveStdio decides the era from the client's opening (it may build a throwaway
      // server for a 2026-07-28 probe the client then abandons for `initialize`).
      const handle = serveStdio(
        () => {
          const server = createMcpServer(gateway);
          servers.add(server);
          server.onclose = () => servers.delete(server);
          return server;
        },
        { transport: new StdioServerTransport(process.stdin, protocolOut) },
      );
      closeStdio = () => handle.close();
      process.stdin.once("end", () => stop());
      process.stdin.once("close", () => stop());
    } else {
      const { serveHttp } = await import("../mcp/mcp-http.js");
      const http = await serveHttp({
        port,
        host: "127.0.0.1",
        tokenEnv: options.tokenEnv,
        allowedOrigins: [...settings.allowedOrigins, ...cliOrigins],
        newServer: (era) => {
          const server = createMcpServer(gateway);
          // A 2026-07-28 request gets a server of its own for that request only.
          if (era === "legacy") {
            servers.add(server);
            server.onclose = () => servers.delete(server);
          }
          return server;
        },
      });
      closeHttp = http.close;
      toolsChangedHttp = http.toolsChanged;
      process.stderr.write(`rein mcp serve: listening on ${http.url} (Authorization: Bearer <token>)\n`);
      if (http.generatedToken) process.stderr.write(`rein mcp serve: token ${http.generatedToken}\n`);
    }
    await stopped;
  } finally {
    unlisten();
    await closeHttp?.();
    await closeStdio?.().catch(() => undefined);
    for (const server of servers) await server.close().catch(() => undefined);
    await agent.dispose();
  }
  return ExitCode.ok;
}
