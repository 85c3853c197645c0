/**
 * `rein approvals list | approve | deny`: a person's answers to tool calls that runs
 * parked (durable approvals, `approvals: { park: true }`).
 *
 * Invariant: reading never locks (a live run is never disturbed); an answer is written
 * only to the one session holding the approval, under that session's lock, and only
 * for the exact call that was parked (`--hash`, when given, must be the parked call's).
 */
import { userInfo } from "node:os";
import {
  type Approval,
  approvalsOf,
  isHarnessError,
  JsonlStorage,
  resolveApproval,
  Session,
  type SessionStore,
} from "@rein/harness";
import { sessionStore } from "../agent/build-agent.js";
import { loadConfig } from "../config/load-config.js";
import { approvalRefused, ExitCode, sessionInUse, sessionNotFound } from "../errors.js";
import type { GlobalOptions } from "../program.js";
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

async function storeOf(globals: GlobalOptions): Promise<SessionStore> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  return sessionStore(loaded);
}

/** Every approval of the store (or of one session), read without locking. */
function readApprovals(store: SessionStore, sessionId?: string): Approval[] {
  let paths: string[];
  try {
    paths = sessionId ? [store.pathOf(sessionId)] : store.list().flatMap((s) => (s.error ? [] : [s.path]));
  } catch (error) {
    throw sessionNotFound((error as Error).message, error);
  }
  const approvals: Approval[] = [];
  for (const path of paths) {
    let session: Session;
    try {
      session = Session.open(JsonlStorage.open(path, { readOnly: true }));
    } catch {
      continue; // unreadable: `rein sessions list` reports it
    }
    try {
      approvals.push(...approvalsOf(session));
    } finally {
      session.close();
    }
  }
  return approvals.sort((a, b) => a.parkedAt - b.parkedAt);
}

export async function listApprovals(options: ListOptions, globals: GlobalOptions): Promise<number> {
  const store = await storeOf(globals);
  const shown = readApprovals(store, options.session).filter(
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
  const found = readApprovals(store).find((a) => a.approvalId === approvalId);
  if (found === undefined) throw approvalRefused(`no parked tool call "${approvalId}" in ${store.dir}`);
  let session: Session;
  try {
    session = store.open(found.sessionId);
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
  } catch (error) {
    if (isHarnessError(error, "approval") || isHarnessError(error, "approval_mismatch")) {
      throw approvalRefused(error.message, error);
    }
    throw error;
  } finally {
    session.close();
  }
  const term = terminal();
  term.out.write(
    `${approval.status} ${approval.approvalId}: ${approval.toolName} ${shorten(approval.args, 80)}\n`,
  );
  term.err.write(term.c.dim(`continue the run with rein run --session ${approval.sessionId} --resume\n`));
  return ExitCode.ok;
}
