/**
 * An HTTP server that runs one agent per request: `POST /runs` with
 * `{ "prompt": "..." }` answers `text/event-stream`, one `data:` line per harness
 * event, ending after `settled`. Each request gets its own session (and harness):
 * a harness is per-session state, never shared between requests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Model, Models } from "@earendil-works/pi-ai";
import { AgentHarness, type AnyAgentTool, MemoryStorage, Session, SessionStore } from "@rein/harness";

/** The model of one run, and the pi-ai collection that serves it (default: pi-ai's built-in providers). */
export interface ModelChoice {
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  models?: Models;
}

export interface AgentServerOptions {
  model: () => ModelChoice;
  tools?: readonly AnyAgentTool[];
  systemPrompt?: string;
  /** Keep sessions as JSONL files here; default in memory (gone after the request). */
  sessionsDir?: string;
  /** Request options such as `apiKey` for real providers. */
  requestOptions?: Record<string, unknown>;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  let body = "";
  for await (const chunk of request) body += chunk;
  return JSON.parse(body || "{}");
}

function fail(response: ServerResponse, status: number, message: string) {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ error: message }));
}

export function createAgentServer(options: AgentServerOptions): Server {
  const store = options.sessionsDir ? new SessionStore(options.sessionsDir) : undefined;
  return createServer(async (request, response) => {
    if (request.method !== "POST" || request.url !== "/runs") return fail(response, 404, "POST /runs");
    let prompt: unknown;
    try {
      prompt = ((await readJson(request)) as { prompt?: unknown }).prompt;
    } catch {
      return fail(response, 400, "body must be JSON");
    }
    if (typeof prompt !== "string" || prompt.trim() === "")
      return fail(response, 400, 'expected { "prompt": string }');

    const session = store ? store.create() : Session.create(new MemoryStorage());
    const { model, models } = options.model();
    const harness = new AgentHarness({
      session,
      model,
      ...(models ? { models } : {}),
      tools: options.tools ?? [],
      systemPrompt: options.systemPrompt ?? "",
      ...(options.requestOptions ? { requestOptions: options.requestOptions } : {}),
    });
    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-rein-session": session.id,
    });
    const unsubscribe = harness.subscribe((event) => {
      response.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    });
    // A client that goes away aborts its run; the session still ends consistent.
    response.on("close", () => {
      if (!response.writableFinished) harness.abort("client disconnected");
    });
    try {
      await harness.prompt(prompt);
    } catch (error) {
      response.write(`event: error\ndata: ${JSON.stringify({ message: (error as Error).message })}\n\n`);
    } finally {
      unsubscribe();
      session.close();
      response.end();
    }
  });
}
