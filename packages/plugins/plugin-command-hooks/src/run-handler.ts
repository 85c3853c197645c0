/**
 * Runs one hook handler the way the agents do: a `command` through `bash -c`
 * in the working directory with the event's JSON on stdin (and
 * `CLAUDE_PROJECT_DIR` set), or an `http` handler as a POST of that JSON.
 *
 * The answer, as Claude Code reads it: exit 0 with stdout that is JSON (an
 * object) or plain text; exit 2 blocks with stderr as the reason; an HTTP
 * answer is a 2xx with a JSON body (or an empty one).
 *
 * Invariant: anything else - another exit code, a signal, a process that
 * cannot start, stdout that looks like JSON but is not, a non-2xx answer, no
 * answer within the timeout (the process group is killed) - rejects with a
 * `CommandHookError`; the plugin decides what a failure means (by default: fail closed).
 */
import { spawn } from "node:child_process";
import { handlerFailed, handlerTimeout, invalidAnswer } from "./errors.js";
import type { CommandHandler, Handler, HttpHandler } from "./settings.js";

export type HandlerOutcome =
  | { kind: "answer"; json: Record<string, unknown> | undefined; text: string }
  | { kind: "block"; reason: string };

const MAX_OUTPUT = 1024 * 1024;

export const handlerName = (handler: Handler): string =>
  handler.type === "command" ? handler.command : handler.url;

function parseStdout(event: string, handler: Handler, stdout: string): HandlerOutcome {
  const text = stdout.trim();
  if (!text.startsWith("{")) return { kind: "answer", json: undefined, text };
  try {
    const json = JSON.parse(text) as unknown;
    if (typeof json !== "object" || json === null || Array.isArray(json)) throw new Error("not an object");
    return { kind: "answer", json: json as Record<string, unknown>, text };
  } catch (error) {
    throw invalidAnswer(
      event,
      handlerName(handler),
      `stdout is not a JSON object (${(error as Error).message})`,
    );
  }
}

function runCommand(
  event: string,
  handler: CommandHandler,
  input: string,
  cwd: string,
  seconds: number,
): Promise<HandlerOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", handler.command], {
      cwd,
      env: { ...process.env, CLAUDE_PROJECT_DIR: cwd },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true, // its own process group, so a timeout kills what it started too
    });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, seconds * 1000);
    child.stdout.on("data", (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT) stdout += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < MAX_OUTPUT) stderr += chunk.toString("utf8");
    });
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(handlerFailed(event, handler.command, `cannot start: ${error.message}`));
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (timedOut) return reject(handlerTimeout(event, handler.command, seconds));
      if (code === 2)
        return resolve({ kind: "block", reason: stderr.trim() || `blocked by ${handler.command}` });
      if (code !== 0) {
        const why = signal ? `killed by ${signal}` : `exit ${code}`;
        return reject(
          handlerFailed(event, handler.command, `${why}${stderr.trim() ? `: ${stderr.trim()}` : ""}`),
        );
      }
      try {
        resolve(parseStdout(event, handler, stdout));
      } catch (error) {
        reject(error);
      }
    });
    // A hook that does not read its input must not fail the write.
    child.stdin.on("error", () => undefined);
    child.stdin.end(input);
  });
}

function headersOf(handler: HttpHandler): Record<string, string> {
  const allowed = new Set(handler.allowedEnvVars ?? []);
  const headers: Record<string, string> = { "content-type": "application/json" };
  for (const [name, value] of Object.entries(handler.headers ?? {})) {
    headers[name] = value.replace(
      /\$\{(\w+)\}|\$(\w+)/g,
      (_, braced: string | undefined, bare: string | undefined) => {
        const variable = (braced ?? bare) as string;
        return allowed.has(variable) ? (process.env[variable] ?? "") : "";
      },
    );
  }
  return headers;
}

async function runHttp(
  event: string,
  handler: HttpHandler,
  input: string,
  seconds: number,
): Promise<HandlerOutcome> {
  let response: Response;
  try {
    response = await fetch(handler.url, {
      method: "POST",
      headers: headersOf(handler),
      body: input,
      signal: AbortSignal.timeout(seconds * 1000),
    });
  } catch (error) {
    if ((error as Error).name === "TimeoutError") throw handlerTimeout(event, handler.url, seconds);
    throw handlerFailed(event, handler.url, `request failed: ${(error as Error).message}`);
  }
  const body = await response.text();
  if (response.status < 200 || response.status > 299)
    throw handlerFailed(event, handler.url, `HTTP ${response.status}`);
  return parseStdout(event, handler, body);
}

export function runHandler(
  event: string,
  handler: Handler,
  input: unknown,
  cwd: string,
  defaultSeconds: number,
): Promise<HandlerOutcome> {
  const seconds = handler.timeout ?? defaultSeconds;
  const json = JSON.stringify(input);
  return handler.type === "command"
    ? runCommand(event, handler, json, cwd, seconds)
    : runHttp(event, handler, json, seconds);
}
