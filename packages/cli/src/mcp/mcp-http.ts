/**
 * `rein mcp serve --http`: the MCP server over Streamable HTTP, both protocol eras.
 *
 * Invariants, checked in this order before anything else is read:
 * - the `Origin` header (DNS-rebinding and cross-site protection, required by
 *   the Streamable HTTP transport): absent passes (non-browser clients send
 *   none); a loopback origin (`http(s)://localhost|127.0.0.1|[::1]`, any port)
 *   or one listed in `allowedOrigins` passes; anything else, `null` and
 *   unparseable values included, is refused with 403. A listed or loopback
 *   origin gets CORS headers, and its preflight (`OPTIONS`, which carries no
 *   token) is answered;
 * - the `Host` header must name this listener (127.0.0.1, localhost or [::1] at
 *   its port), else 403;
 * - `Authorization: Bearer <token>` (compared in constant time), else 401;
 * - the path is `/mcp`, and a body over 4 MiB is refused with 413.
 * Listens on 127.0.0.1 only. A 2026-07-28 request (its `_meta` envelope) is served
 * by the SDK's per-request handler; a 2025-era client gets one MCP session per
 * `initialize` (its own server object), so it keeps its standalone stream for
 * `list_changed`. Every server object shares the one tool gateway. Answers to
 * requests are single JSON bodies in both eras (nothing is streamed mid-call).
 */
import { randomBytes, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { usageError } from "../errors.js";
import { CORS_HEADERS, originAllowed } from "./mcp-origin.js";

export interface HttpOptions {
  port: number;
  host: string;
  /** Environment variable holding the token (default REIN_MCP_TOKEN); unset: a random token is made. */
  tokenEnv: string | undefined;
  /** Browser origins allowed besides loopback ones, each `scheme://host[:port]` (already checked). */
  allowedOrigins: readonly string[];
  /** A fresh server object; `era` says which protocol era it will serve. */
  newServer(era: "legacy" | "modern"): Server;
}

export interface HttpListener {
  url: string;
  /** Set when no token was given: print it, the client needs it. */
  generatedToken: string | undefined;
  /** Tells 2026-07-28 clients with an open `subscriptions/listen` stream that the tool list changed. */
  toolsChanged(): void;
  close(): Promise<void>;
}

const MAX_BODY = 4 * 1024 * 1024;
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        // Stop keeping it, let the rest drain, so the 413 can still be sent.
        req.off("data", onData);
        req.resume();
        reject(new BodyTooLarge(`request body over ${MAX_BODY} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

const send = (res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
};

/** The web-standard Request the SDK's handlers take, for a Node request whose body is already read. */
function webRequest(req: IncomingMessage, body: Buffer | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [key, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(key, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(key, item);
  }
  return new Request(`http://${req.headers.host}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    signal,
    ...(body !== undefined ? { body: new Uint8Array(body) } : {}),
  });
}

/**
 * Writes a web Response to Node's. A JSON answer (every call's, see `enableJsonResponse`)
 * goes out whole, headers and body in one write with its length; an SSE body is streamed
 * until either side ends.
 */
async function writeResponse(res: ServerResponse, response: Response, extra: Record<string, string>) {
  const headers: Record<string, string> = { ...extra };
  response.headers.forEach((value, key) => {
    headers[key] = value;
  });
  if (!response.body) {
    res.writeHead(response.status, headers);
    return void res.end();
  }
  if (!(headers["content-type"] ?? "").startsWith("text/event-stream")) {
    const body = Buffer.from(await response.arrayBuffer());
    headers["content-length"] = String(body.length);
    res.writeHead(response.status, headers);
    return void res.end(body);
  }
  res.writeHead(response.status, headers);
  const reader = response.body.getReader();
  res.on("close", () => void reader.cancel().catch(() => undefined));
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    res.write(value);
  }
  res.end();
}

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
  const allowedOrigins = new Set(options.allowedOrigins);
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const modern = createMcpHandler(() => options.newServer("modern"), {
    legacy: "reject",
    maxRequestBodySize: MAX_BODY,
  });
  let allowedHosts = new Set<string>();

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const origin = req.headers.origin;
    const verdict = originAllowed(origin, allowedOrigins);
    if (verdict === false)
      return send(res, 403, `origin ${JSON.stringify(origin)} is not allowed (see --allow-origin)`);
    const cors: Record<string, string> =
      verdict === true ? { "access-control-allow-origin": origin as string, ...CORS_HEADERS } : {};
    if (!allowedHosts.has(req.headers.host ?? "")) {
      return send(res, 403, `host ${JSON.stringify(req.headers.host ?? "")} is not this listener`, cors);
    }
    if (req.method === "OPTIONS" && verdict === true) {
      res.writeHead(204, cors);
      return void res.end();
    }
    if (!authorized(req))
      return send(res, 401, "missing or wrong bearer token", { "www-authenticate": "Bearer", ...cors });
    if (new URL(req.url ?? "/", "http://localhost").pathname !== "/mcp")
      return send(res, 404, "not found: use /mcp", cors);

    let parsedBody: unknown;
    let body: Buffer | undefined;
    if (req.method === "POST") {
      try {
        body = await readBody(req);
      } catch (error) {
        if (!(error instanceof BodyTooLarge)) throw error;
        res.once("finish", () => req.destroy());
        return send(res, 413, error.message, { connection: "close", ...cors });
      }
      try {
        parsedBody = body.length === 0 ? undefined : JSON.parse(body.toString("utf8"));
      } catch {
        return send(res, 400, "request body is not JSON", cors);
      }
    }
    const aborted = new AbortController();
    res.on("close", () => aborted.abort());
    const request = webRequest(req, body, aborted.signal);
    if (!(await isLegacyRequest(request, parsedBody, { maxRequestBodySize: MAX_BODY }))) {
      return writeResponse(res, await modern.fetch(request, { parsedBody }), cors);
    }
    // A 2025-era client: one session per initialize, kept until it ends it or we stop.
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (existing) return writeResponse(res, await existing.handleRequest(request, { parsedBody }), cors);
    if (sessionId !== undefined) return send(res, 404, "unknown session", cors);
    if (req.method !== "POST" || !isInitializeRequest(parsedBody))
      return send(res, 400, "no session: send initialize first", cors);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: MAX_BODY,
      // A call's answer as one JSON body, not an SSE stream of one event: nothing is sent
      // mid-call (no progress, no server-to-client request), and list_changed goes on the
      // session's standalone GET stream either way. One socket write per answer, not three.
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await options.newServer("legacy").connect(transport);
    return writeResponse(res, await transport.handleRequest(request, { parsedBody }), cors);
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
  allowedHosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  return {
    url: `http://${options.host === "::1" ? "[::1]" : options.host}:${port}/mcp`,
    generatedToken: given ? undefined : token,
    toolsChanged: () => modern.notify.toolsChanged(),
    async close() {
      await modern.close().catch(() => undefined);
      for (const transport of sessions.values()) await transport.close().catch(() => undefined);
      await new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      });
    },
  };
}
