/**
 * Runs from a job queue instead of in the web process: the routes queue prompts for
 * `rein worker` processes (any number, on any host) and stream each session's events
 * back as server-sent events, over PostgreSQL (pg-boss jobs, LISTEN/NOTIFY).
 *
 * Sessions live where the workers' config keeps them: in PostgreSQL (the default: the
 * queue's database, or `sessionsUrl`; workers configured with `session: { store:
 * "postgres", url }`, so nothing is shared but the database), or in a session
 * directory every worker sees (`sessionsDir`, their `session.dir`).
 *
 * - `POST /sessions` creates a session in that store: `{ "sessionId" }`.
 * - `POST /sessions/<id>/prompts` with `{ "prompt": "..." }` queues it: 202 `{ "requestId" }`.
 * - `GET /sessions/<id>/events` streams the session's notices (`event: event` with a
 *   harness event, `event: end` with a request's status) until the client leaves.
 *   Open it before posting a prompt to see the whole run.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { closeQueue, followSession, openQueue, submitPrompt } from "@rein/cli";
import { isHarnessError, SessionStore } from "@rein/harness";
import { PostgresSessionStore } from "@rein/store-postgres";

export interface QueueServerOptions {
  /** The queue's PostgreSQL database (the one the workers use). */
  url: string;
  /** Sessions in this directory (the workers' `session.dir`) instead of PostgreSQL. */
  sessionsDir?: string;
  /** The workers' `session.url` when sessions are in another database than the queue. */
  sessionsUrl?: string;
}

/** What the routes need of the session store. */
interface SessionsPort {
  /** Creates an empty session; resolves with its id. */
  create(): Promise<string>;
  /** The full id of the session `idOrPrefix` names, or `undefined` if there is none. */
  find(idOrPrefix: string): Promise<string | undefined>;
}

function sessionsOf(options: QueueServerOptions): SessionsPort {
  if (options.sessionsDir !== undefined) {
    const store = new SessionStore(options.sessionsDir);
    return {
      create: async () => {
        const session = store.create();
        session.close();
        return session.id;
      },
      find: async (id) => {
        try {
          const path = store.pathOf(id);
          return store.list().find((summary) => summary.path === path)?.id;
        } catch {
          return undefined;
        }
      },
    };
  }
  const store = new PostgresSessionStore(options.sessionsUrl ?? options.url);
  return {
    create: async () => {
      const session = await store.create();
      await session.close();
      return session.id;
    },
    // No such session (or an ambiguous prefix) is a 404; a database failure is not.
    find: (id) =>
      store.resolveId(id).catch((error: unknown) => {
        if (isHarnessError(error, "invalid_argument")) return undefined;
        throw error;
      }),
  };
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
  const sessions = sessionsOf(options);
  const boss = await openQueue(options.url, { role: "client" });
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    const route = /^\/sessions(?:\/([^/]+)\/(prompts|events))?$/.exec(request.url ?? "");
    if (!route)
      return reply(response, 404, {
        error: "POST /sessions, POST /sessions/<id>/prompts, GET /sessions/<id>/events",
      });
    const [, named, what] = route;
    if (named === undefined) {
      if (request.method !== "POST") return reply(response, 405, { error: "POST /sessions" });
      return reply(response, 201, { sessionId: await sessions.create() });
    }
    // The full id: workers and followers agree on it.
    const sessionId = await sessions.find(named);
    if (sessionId === undefined) return reply(response, 404, { error: `no session ${named}` });
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
  };
  const server = createServer((request, response) => {
    // The store or the queue failed (say, the database is down): a 500 naming it, never a crash.
    handle(request, response).catch((error: unknown) => {
      if (response.headersSent) response.end();
      else reply(response, 500, { error: (error as Error).message });
    });
  });
  server.on("close", () => void closeQueue(boss));
  return server;
}
