/**
 * `rein approvals list | approve | deny`: a person's answers to tool calls that runs
 * parked (durable approvals, `approvals: { park: true }`).
 *
 * Sessions are read and written through the configured store (session-backend.ts):
 * JSONL files or PostgreSQL, so a person can answer from any host that reaches the store.
 *
 * Invariant: reading never locks (a live run is never disturbed); an answer is written
 * only to the one session holding the approval, under that session's one-writer lock
 * (the JSONL lock file or the PostgreSQL advisory lock), stored before the command
 * reports it, and only for the exact call that was parked (`--hash`, when given, must
 * be the parked call's).
 */
import { userInfo } from "node:os";
import { type Approval, approvalsOf, isHarnessError, resolveApproval, type Session } from "@rein/harness";
import { type SessionBackendPort, sessionBackend } from "../agent/session-backend.js";
import { loadConfig } from "../config/load-config.js";
import { approvalRefused, CliError, ExitCode, sessionInUse, sessionNotFound } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { shorten, terminal } from "../ui/terminal.js";

export interface ListOptions {
  json?: boolean;
  /** Answered and closed ones too. */
  all?: boolean;
  session?: string;
}

export interface AnswerOptions {
  reason?: string;
  /** The hash the person was shown (`list`); the answer is refused if the parked call's differs. */
  hash?: string;
  /** Who answers; default `person:<os user>`. */
  by?: string;
}

async function storeOf(globals: GlobalOptions): Promise<SessionBackendPort> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  return sessionBackend(loaded);
}

/** Every approval of the store (or of one session), read without locking. */
async function readApprovals(store: SessionBackendPort, sessionId?: string): Promise<Approval[]> {
  let ids: string[];
  if (sessionId !== undefined) ids = [sessionId];
  else {
    try {
      ids = await store.sessionsWithParks();
    } catch (error) {
      if (error instanceof CliError && error.code === "database") throw error;
      throw sessionNotFound(`cannot list the sessions in ${store.where}: ${(error as Error).message}`, error);
    }
  }
  const approvals: Approval[] = [];
  for (const id of ids) {
    let session: Session;
    try {
      session = await store.openReadOnly(id);
    } catch (error) {
      // One named session must exist; while listing them all, an unreadable one is
      // skipped (`rein sessions list` reports it) and one removed meanwhile is gone.
      if (sessionId !== undefined) throw sessionNotFound((error as Error).message, error);
      continue;
    }
    try {
      approvals.push(...approvalsOf(session));
    } finally {
      await session.close();
    }
  }
  return approvals.sort((a, b) => a.parkedAt - b.parkedAt);
}

export async function listApprovals(options: ListOptions, globals: GlobalOptions): Promise<number> {
  const store = await storeOf(globals);
  const shown = (await readApprovals(store, options.session)).filter(
    (a) => options.all || (a.status === "pending" && !a.done),
  );
  const term = terminal();
  if (options.json) {
    for (const approval of shown) term.out.write(`${JSON.stringify(approval)}\n`);
    return ExitCode.ok;
  }
  if (shown.length === 0) {
    term.err.write(options.all ? "no parked tool calls\n" : "no pending approvals\n");
    return ExitCode.ok;
  }
  const { co } = term;
  for (const a of shown) {
    const when = new Date(a.parkedAt).toISOString().replace("T", " ").slice(0, 16);
    const status = a.status === "pending" ? co.yellow("pending") : a.status;
    term.out.write(
      `${co.bold(a.approvalId)}  ${status}${a.done ? " (done)" : ""}  ${when}  session ${a.sessionId.slice(0, 8)}\n`,
    );
    term.out.write(`  ${co.bold(a.toolName)} ${shorten(a.args, 100)}\n`);
    term.out.write(`  asked by ${a.askedBy}: ${a.reason}\n`);
    if (a.answer) term.out.write(`  answered by ${a.answer.by}: ${a.answer.reason}\n`);
    term.out.write(co.dim(`  hash ${a.argsHash}\n`));
  }
  return ExitCode.ok;
}

export async function answerApproval(
  decision: "allow" | "deny",
  approvalId: string,
  options: AnswerOptions,
  globals: GlobalOptions,
): Promise<number> {
  const store = await storeOf(globals);
  const found = (await readApprovals(store)).find((a) => a.approvalId === approvalId);
  if (found === undefined) throw approvalRefused(`no parked tool call "${approvalId}" in ${store.where}`);
  let session: Session;
  try {
    session = await store.open(found.sessionId);
  } catch (error) {
    if (isHarnessError(error, "session_in_use")) throw sessionInUse(error.message, error);
    throw sessionNotFound(`cannot open session ${found.sessionId}: ${(error as Error).message}`, error);
  }
  let approval: Approval;
  try {
    approval = resolveApproval(session, approvalId, {
      decision,
      by: options.by ?? `person:${userInfo().username}`,
      ...(options.reason !== undefined ? { reason: options.reason } : {}),
      ...(options.hash !== undefined ? { argsHash: options.hash } : {}),
    });
    // An asynchronous store (PostgreSQL) is still writing: the answer counts once stored.
    await session.whenStored();
  } catch (error) {
    if (isHarnessError(error, "approval") || isHarnessError(error, "approval_mismatch")) {
      throw approvalRefused(error.message, error);
    }
    throw error;
  } finally {
    // Releases the lock; the answer is stored by now (or its failure is being reported).
    await Promise.resolve(session.close()).catch(() => undefined);
  }
  const term = terminal();
  term.out.write(
    `${approval.status} ${approval.approvalId}: ${approval.toolName} ${shorten(approval.args, 80)}\n`,
  );
  term.err.write(term.c.dim(`continue the run with rein run --session ${approval.sessionId} --resume\n`));
  return ExitCode.ok;
}
