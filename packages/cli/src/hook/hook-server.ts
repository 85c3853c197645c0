/**
 * `rein hook serve`: agent hook events over HTTP (Claude Code's `http` hook
 * type) on 127.0.0.1, decided on one stack built at start, so a call costs a
 * decision, not a process.
 *
 * Invariants: every request is answered 200 with a JSON body, failures
 * included (a wrong token, a bad path, a body that is not a hook input, a
 * stack that fails): Claude Code lets a call run on any non-2xx answer or a
 * body that is not JSON, so a failure is a deny (or a block, for the event).
 * The token is compared in constant time; the Host header must name this
 * listener (DNS rebinding). Requests are decided one at a time, in arrival
 * order, like a run's calls.
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { AgentHarness } from "@rein/harness";
import { AGENTS, type AgentName, GATING_EVENTS, type HookAnswer, type HookEvent } from "./agent-protocols.js";
import { handleEvent } from "./handle-event.js";
import type { AuditWriter } from "./hook-audit.js";
import { type HookInput, MAX_INPUT_BYTES, parseHookInput } from "./hook-input.js";

export interface HookServerOptions {
  harness: AgentHarness;
  audit: AuditWriter | undefined;
  token: string;
  port: number;
  timeoutMs: number;
}

export interface HookServer {
  url: string;
  close(): Promise<void>;
}

/** An answer that must be JSON (HTTP): a block the command hook says by exit 2, said in fields. */
export function httpBody(agent: AgentName, event: HookEvent | undefined, answer: HookAnswer): unknown {
  if (answer.exitCode === 0) return answer.stdout.trim() === "" ? {} : JSON.parse(answer.stdout);
  const reason = answer.stderr.trim();
  if (event === undefined || event === "PreToolUse")
    return agent === "gemini"
      ? { decision: "deny", reason }
      : {
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: reason,
          },
        };
  if (event === "PermissionRequest")
    return {
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: reason },
      },
    };
  if (GATING_EVENTS.includes(event) || answer.exitCode === 2) return { decision: "block", reason };
  return { systemMessage: reason }; // a failure on an event that blocks nothing: reported
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_INPUT_BYTES) {
        reject(new Error(`the hook input is larger than ${MAX_INPUT_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function tokenMatches(header: string | undefined, token: string): boolean {
  const given = Buffer.from(/^Bearer (.+)$/.exec(header ?? "")?.[1] ?? "");
  const expected = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function startHookServer(options: HookServerOptions): Promise<HookServer> {
  let queue: Promise<unknown> = Promise.resolve();
  let port = 0;
  const send = (res: ServerResponse, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = /^\/hook\/([a-z-]+)$/.exec((req.url ?? "").split("?")[0] as string);
    const agent = (AGENTS as readonly string[]).includes(path?.[1] ?? "")
      ? (path?.[1] as AgentName)
      : "claude-code";
    const fail = (message: string, event?: HookEvent) =>
      send(
        res,
        httpBody(agent, event, {
          exitCode: 2,
          stdout: "",
          stderr: `rein hook serve: ${message} (blocked: Rein fails closed)`,
        }),
      );
    const host = (req.headers.host ?? "").toLowerCase();
    if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`)
      return fail(`Host "${host}" is not this listener`);
    if (!tokenMatches(req.headers.authorization, options.token)) return fail("missing or wrong bearer token");
    if (req.method !== "POST" || !path)
      return fail(`expected POST /hook/<agent> (agents: ${AGENTS.join(", ")})`);
    if (path[1] !== agent) return fail(`unknown agent "${path[1]}"`);
    let input: HookInput;
    try {
      input = parseHookInput(agent, await readBody(req));
    } catch (error) {
      return fail((error as Error).message);
    }
    const answer = queue.then(() => handleEvent(options.harness, options.audit, input, options.timeoutMs));
    queue = answer.catch(() => undefined);
    send(res, httpBody(agent, input.event, await answer));
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent)
        send(res, httpBody("claude-code", undefined, { exitCode: 2, stdout: "", stderr: String(error) }));
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => {
      port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
