/**
 * `rein mcp serve --http`: the MCP server over Streamable HTTP.
 *
 * Invariants: listens on 127.0.0.1 only; every request must carry
 * `Authorization: Bearer <token>` (compared in constant time) or gets 401 before
 * anything else is read; the Host header must name this listener (DNS-rebinding
 * protection); one MCP session per `initialize`, each with its own server object
 * sharing the one tool gateway; bodies over 4 MiB are refused.
 */
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { usageError } from "../errors.js";

export interface HttpOptions {
  port: number;
  host: string;
  /** Environment variable holding the token (default REIN_MCP_TOKEN); unset: a random token is made. */
  tokenEnv: string | undefined;
  newServer(): Server;
}

export interface HttpListener {
  url: string;
  /** Set when no token was given: print it, the client needs it. */
  generatedToken: string | undefined;
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error("request body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      try {
        resolve(size === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString("utf8")));
      } catch {
        reject(new Error("request body is not JSON"));
      }
    });
    req.on("error", reject);
  });
}

const send = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
};

export async function serveHttp(options: HttpOptions): Promise<HttpListener> {
  if (!LOOPBACK.has(options.host))
    throw usageError(`--host ${options.host}: rein mcp serve listens on loopback only`);
  const tokenEnv = options.tokenEnv ?? "REIN_MCP_TOKEN";
  const given = process.env[tokenEnv];
  if (options.tokenEnv !== undefined && !given) {
    throw usageError(`--token-env ${tokenEnv}: the environment variable is not set`);
  }
  const token = given || randomBytes(24).toString("base64url");
  const expected = Buffer.from(`Bearer ${token}`);
  const authorized = (req: IncomingMessage) => {
    const header = Buffer.from(req.headers.authorization ?? "");
    return header.length === expected.length && timingSafeEqual(header, expected);
  };
  const transports = new Map<string, StreamableHTTPServerTransport>();
  let allowedHosts: string[] = [];

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (!authorized(req))
      return send(res, 401, "missing or wrong bearer token", { "www-authenticate": "Bearer" });
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp")
      return send(res, 404, "not found: use /mcp");
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? transports.get(sessionId) : undefined;
    if (req.method === "POST") {
      const body = await readBody(req);
      if (existing) return existing.handleRequest(req, res, body);
      if (sessionId !== undefined) return send(res, 404, "unknown session");
      if (!isInitializeRequest(body)) return send(res, 400, "no session: send initialize first");
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableDnsRebindingProtection: true,
        allowedHosts,
        onsessioninitialized: (id) => {
          transports.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) transports.delete(transport.sessionId);
      };
      await options.newServer().connect(transport);
      return transport.handleRequest(req, res, body);
    }
    if (!existing) return send(res, sessionId === undefined ? 400 : 404, "unknown or missing session");
    return existing.handleRequest(req, res);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 400, (error as Error).message);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
  return {
    url: `http://${options.host === "::1" ? "[::1]" : options.host}:${port}/mcp`,
    generatedToken: given ? undefined : token,
    async close() {
      for (const transport of transports.values()) await transport.close().catch(() => undefined);
      await new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      });
    },
  };
}
