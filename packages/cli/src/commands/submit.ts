/**
 * `rein submit [prompt...]`: queues a prompt for `rein worker` (a new session unless
 * `--session` names one) and prints the session and request ids; `--follow` streams
 * the request's events back (LISTEN/NOTIFY) until it ends and exits as `rein run` would.
 * The session is created in (or looked up from) the configured store, the one the
 * workers run on: JSONL files they share, or PostgreSQL.
 */
import { sessionBackend } from "../agent/session-backend.js";
import { loadConfig } from "../config/load-config.js";
import { ExitCode, sessionNotFound, usageError } from "../errors.js";
import type { GlobalOptions } from "../program.js";
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
  const store = await sessionBackend(loaded);
  let sessionId: string;
  if (options.session) {
    try {
      // The full id, so workers and followers agree on it (read without locking: a run may hold it).
      const session = await store.openReadOnly(options.session);
      sessionId = session.id;
      await session.close();
    } catch (error) {
      throw sessionNotFound((error as Error).message, error);
    }
  } else {
    const session = await store.create({ cwd: globals.cwd });
    sessionId = session.id;
    await session.close();
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
  const follower = options.follow ? await followSession(url, sessionId, onNotice) : undefined;
  const boss = await openQueue(url, { role: "client" });
  try {
    requestId = await submitPrompt(boss, { sessionId, prompt });
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
