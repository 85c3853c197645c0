/**
 * `rein submit [prompt...]`: queues a prompt for `rein worker` (a new session unless
 * `--session` names one) and prints the session and request ids; `--follow` streams
 * the request's events back (LISTEN/NOTIFY) until it ends and exits as `rein run` would.
 * The session is created in (or looked up from) the configured store, the one the
 * workers run on: JSONL files they share, or PostgreSQL.
 */
import { maskConnectionStrings } from "@rein/harness";
import { usingDatabase } from "../agent/database-errors.js";
import { type SessionBackendPort, sessionBackend } from "../agent/session-backend.js";
import { loadConfig } from "../config/load-config.js";
import { CliError, ExitCode, sessionNotFound, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { terminal } from "../ui/terminal.js";
import { followSession, type QueueNotice } from "../worker/notices.js";
import { closeQueue, openQueue, submitPrompt } from "../worker/prompt-queue.js";
import { queueUrl } from "./worker.js";

export interface SubmitOptions {
  db?: string;
  session?: string;
  follow?: boolean;
  json?: boolean;
}

export async function submitCommand(
  words: string[],
  options: SubmitOptions,
  globals: GlobalOptions,
): Promise<number> {
  const prompt = words.join(" ").trim();
  if (prompt === "") throw usageError("no prompt given", 'rein submit "what to do" [--session <id>]');
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const url = queueUrl(options.db, loaded);
  const where = maskConnectionStrings(url);
  const store = await sessionBackend(loaded);
  // The queue first: a queue that cannot be used must not leave a new, empty session behind.
  const boss = await usingDatabase("queue", where, () => openQueue(url, { role: "client" }));
  let sessionId: string;
  try {
    sessionId = await sessionFor(store, options.session, globals.cwd);
  } catch (error) {
    await closeQueue(boss);
    throw error;
  }
  const term = terminal();
  let ended: ((status: string) => void) | undefined;
  const end = new Promise<string>((resolve) => {
    ended = resolve;
  });
  let requestId: string | undefined;
  const early: QueueNotice[] = [];
  const onNotice = (notice: QueueNotice) => {
    if (requestId === undefined) {
      early.push(notice);
      return;
    }
    if (notice.requestId !== requestId) return;
    if (options.json) term.out.write(`${JSON.stringify(notice)}\n`);
    else if (notice.kind === "event") describe(notice.event, term.out, term.err);
    if (notice.kind === "end") ended?.(notice.status);
  };
  let follower: { stop(): Promise<void> } | undefined;
  try {
    if (options.follow)
      follower = await usingDatabase("queue", where, () =>
        followSession(url, sessionId, onNotice, (error) => {
          // The request goes on in the workers; only this stream of it is gone.
          term.err.write(
            maskConnectionStrings(
              `rein: lost the queue database while following request ${requestId ?? ""} (${error.message}); it goes on in the workers: rein sessions show ${sessionId}\n`,
            ),
          );
          ended?.("lost");
        }),
      );
    // The caller's trace (OpenTelemetry's TRACEPARENT) goes with the job to the worker that runs it.
    const traceparent = process.env.TRACEPARENT;
    requestId = await usingDatabase("queue", where, () =>
      submitPrompt(boss, { sessionId, prompt, ...(traceparent ? { traceparent } : {}) }),
    );
  } finally {
    await closeQueue(boss);
  }
  term.err.write(`submitted request ${requestId} for session ${sessionId}\n`);
  if (!follower) {
    term.out.write(`${JSON.stringify({ requestId, sessionId })}\n`);
    return ExitCode.ok;
  }
  for (const notice of early.splice(0)) onNotice(notice);
  const status = await end;
  await follower.stop();
  return status === "completed" ? ExitCode.ok : status === "parked" ? ExitCode.parked : ExitCode.failed;
}

/** The session to queue for: `--session`'s (its full id), else a new one. */
async function sessionFor(store: SessionBackendPort, id: string | undefined, cwd: string): Promise<string> {
  if (id === undefined) {
    const session = await store.create({ cwd });
    await session.close();
    return session.id;
  }
  try {
    // The full id, so workers and followers agree on it (read without locking: a run may hold it).
    const session = await store.openReadOnly(id);
    await session.close();
    return session.id;
  } catch (error) {
    if (error instanceof CliError && error.code === "database") throw error;
    throw sessionNotFound((error as Error).message, error);
  }
}

function describe(
  event: { type: string; [key: string]: unknown },
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
) {
  if (event.type === "message_end") {
    const message = event.message as { role?: string; content?: unknown };
    if (message?.role === "assistant" && Array.isArray(message.content)) {
      const text = message.content
        .flatMap((block: { type?: string; text?: string }) =>
          block.type === "text" && block.text ? [block.text] : [],
        )
        .join("");
      if (text) out.write(`${text}\n`);
    }
  } else if (event.type === "tool_execution_start") {
    err.write(`→ ${String(event.toolName)}\n`);
  } else if (event.type === "tool_parked") {
    err.write(`⏸ parked: ${String(event.toolName)} waits for approval ${String(event.approvalId)}\n`);
  }
}
