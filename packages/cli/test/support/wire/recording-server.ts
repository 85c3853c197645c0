/**
 * A loopback HTTP server that records every request (method, path, headers, JSON body)
 * and answers each with the next scripted turn, in a provider's own streaming format.
 * Shared by the per-API servers of the wire-capture tests; listens on 127.0.0.1 only.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createH2cServer, type Http2ServerRequest, type Http2Session } from "node:http2";
import type { AddressInfo } from "node:net";

/** One request as it arrived on the wire. */
export interface CapturedRequest {
  method: string;
  /** Path and query, as sent (`/v1/messages?beta=true`). */
  path: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: a captured body is whatever the client sent; tests read it by path.
  body: any;
}

/** What the scripted model says in one turn: a tool call, or a text answer; with its usage. */
export interface WireTurn {
  thinking?: string;
  text?: string;
  toolCall?: { id: string; name: string; args: Record<string, unknown> };
  /** Tokens as the provider reports them: fresh input, output, cache read, cache write. */
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number; reasoning?: number };
}

export interface WireServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  origin: string;
  requests: CapturedRequest[];
  close(): Promise<void>;
}

/** The turns in order, or a function choosing each request's turn (an agent's side requests vary). */
export type WireScript = WireTurn[] | ((request: CapturedRequest, index: number) => WireTurn | undefined);

/** Answers one request with one turn; `index` counts requests from 0. */
export type TurnWriter = (
  res: ServerResponse,
  turn: WireTurn,
  request: CapturedRequest,
  index: number,
) => void;

function headerRecord(req: IncomingMessage | Http2ServerRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    // HTTP/2 pseudo-headers (`:path`, `:method`) are recorded as method and path instead.
    if (value !== undefined && !name.startsWith(":"))
      out[name.toLowerCase()] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

/**
 * Starts a recording server that answers request n with `turns[n]` through `write`;
 * with `http2`, a cleartext HTTP/2 server (prior knowledge), as the AWS SDK speaks it.
 */
export function startRecordingServer(
  turns: WireScript,
  write: TurnWriter,
  options: { http2?: boolean } = {},
): Promise<WireServer> {
  const requests: CapturedRequest[] = [];
  const sessions = new Set<Http2Session>();
  const handle = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown = raw;
      try {
        body = raw === "" ? undefined : JSON.parse(raw);
      } catch {
        // Kept as text: a test asserting on the body then fails on its shape.
      }
      const request: CapturedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: headerRecord(req),
        body,
      };
      const index = requests.length;
      requests.push(request);
      const turn = typeof turns === "function" ? turns(request, index) : turns[index];
      if (!turn) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `no scripted turn for request ${index + 1}` } }));
        return;
      }
      write(res, turn, request, index);
    });
  };
  const server = options.http2
    ? createH2cServer((req, res) => handle(req, res as unknown as ServerResponse)).on(
        "session",
        (session) => {
          sessions.add(session);
          session.on("close", () => sessions.delete(session));
        },
      )
    : createServer(handle);
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            if ("closeAllConnections" in server) server.closeAllConnections();
            for (const session of sessions) session.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Starts an SSE response (`text/event-stream`, no buffering). */
export function openSse(res: ServerResponse, headers: Record<string, string> = {}): void {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
    ...headers,
  });
}

/** Writes one SSE event: an optional `event:` line, then the JSON payload as `data:`. */
export function sendSse(res: ServerResponse, data: unknown, event?: string): void {
  res.write(
    `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
  );
}
