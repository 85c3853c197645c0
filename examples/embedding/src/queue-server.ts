/**
 * Runs from a job queue instead of in the web process: the routes queue prompts for
 * `rein worker` processes (any number, on any host) and stream each session's events
 * back as server-sent events, over PostgreSQL (pg-boss jobs, LISTEN/NOTIFY).
 *
 * - `POST /sessions` creates a session in the shared session directory: `{ "sessionId" }`.
 * - `POST /sessions/<id>/prompts` with `{ "prompt": "..." }` queues it: 202 `{ "requestId" }`.
 * - `GET /sessions/<id>/events` streams the session's notices (`event: event` with a
 *   harness event, `event: end` with a request's status) until the client leaves.
 *   Open it before posting a prompt to see the whole run.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { followSession, openQueue, submitPrompt } from "@rein/cli";
import { SessionStore } from "@rein/harness";

export interface QueueServerOptions {
  /** The queue's PostgreSQL database (the one the workers use). */
  url: string;
  /** The session directory the workers use (their config's `session.dir`). */
  sessionsDir: string;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  let body = "";
  for await (const chunk of request) body += chunk;
  return JSON.parse(body || "{}");
}

function reply(response: ServerResponse, status: number, body: unknown) {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

export async function createQueueServer(options: QueueServerOptions): Promise<Server> {
  const store = new SessionStore(options.sessionsDir);
  const boss = await openQueue(options.url, { role: "client" });
  const server = createServer(async (request, response) => {
    const route = /^\/sessions(?:\/([^/]+)\/(prompts|events))?$/.exec(request.url ?? "");
    if (!route)
      return reply(response, 404, {
        error: "POST /sessions, POST /sessions/<id>/prompts, GET /sessions/<id>/events",
      });
    const [, sessionId, what] = route;
    if (sessionId === undefined) {
      if (request.method !== "POST") return reply(response, 405, { error: "POST /sessions" });
      const session = store.create();
      const id = session.id;
      session.close();
      return reply(response, 201, { sessionId: id });
    }
    try {
      store.pathOf(sessionId);
    } catch {
      return reply(response, 404, { error: `no session ${sessionId}` });
    }
    if (what === "prompts" && request.method === "POST") {
      let prompt: unknown;
      try {
        prompt = ((await readJson(request)) as { prompt?: unknown }).prompt;
      } catch {
        return reply(response, 400, { error: "body must be JSON" });
      }
      if (typeof prompt !== "string" || prompt.trim() === "")
        return reply(response, 400, { error: 'expected { "prompt": string }' });
      const requestId = await submitPrompt(boss, { sessionId, prompt });
      return reply(response, 202, { requestId, sessionId });
    }
    if (what === "events" && request.method === "GET") {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const follower = await followSession(options.url, sessionId, (notice) => {
        response.write(`event: ${notice.kind}\ndata: ${JSON.stringify(notice)}\n\n`);
      });
      response.write(": following\n\n"); // LISTEN is in place: prompts posted from now on are seen whole
      response.on("close", () => void follower.stop());
      return;
    }
    return reply(response, 405, { error: `${request.method} not allowed here` });
  });
  server.on("close", () => void boss.stop({ graceful: false, wait: false }));
  return server;
}
