/**
 * Durable approvals: tool calls a run parked (an `ask` nobody was there to answer)
 * and a person's answers to them, read from and written to a session's journal, so
 * they work with any `SessionStorage` and from any process holding the session.
 *
 * Invariants:
 * - A park (`tool_park`) is written only by a run; an answer (`tool_approval`) only
 *   through `resolveApproval`, i.e. by the application or the CLI, never by the model
 *   (no tool reaches the journal). The first answer is final: a second one is refused.
 * - An answer binds `argsHash` = sha256 of tool name + RFC 8785 canonical arguments.
 *   An answer naming another hash than the park's is refused (`approval_mismatch`), and
 *   the resumed run checks the hash again before it executes anything.
 * - A park stays open while its call has no result on the session; once the resumed
 *   run records the result, the approval is `done` and can never apply again.
 */
import { createHash } from "node:crypto";
import canonicalizeModule from "canonicalize";
import { approvalError, approvalMismatch, invalidArgument, parkedError } from "../errors.js";
import type { ParkedCall } from "../events/event-types.js";
import type { JournalEntry, JournalRecord } from "./entries.js";
import type { Session } from "./session.js";
import { openToolCalls } from "./tool-call-state.js";

export type ApprovalStatus = "pending" | "approved" | "denied";

export type ParkRecord = Extract<JournalRecord, { event: "tool_park" }>;
export type ApprovalRecord = Extract<JournalRecord, { event: "tool_approval" }>;

/** One parked call of a session and where it stands. */
export interface Approval extends ParkedCall {
  sessionId: string;
  runId: string;
  /** Epoch milliseconds of the park. */
  parkedAt: number;
  status: ApprovalStatus;
  /** The person's answer, once given. */
  answer?: { by: string; reason: string; at: number };
  /** The call has its result on the session (the resumed run ran or refused it). */
  done: boolean;
}

/** A person's answer to a parked call. */
export interface ApprovalAnswer {
  decision: "allow" | "deny";
  /** Who answers, e.g. `person:alice` (shown in the decision record). */
  by: string;
  reason?: string;
  /** The hash the person saw (from `list`); when given it must equal the park's. */
  argsHash?: string;
}

/** sha256 (hex) of `{ name, args }` in RFC 8785 canonical JSON: key order and spacing never matter. */
export function callHash(toolName: string, args: unknown): string {
  const text = canonicalize({ name: toolName, args });
  if (text === undefined) throw invalidArgument(`tool call ${toolName}: arguments cannot be serialised`);
  return createHash("sha256").update(text).digest("hex");
}

// The package is CommonJS (`module.exports = fn`) with an ESM-style declaration: the
// default import is the function at run time, whatever its typings say.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

const isPark = (record: JournalEntry): record is JournalEntry & ParkRecord => record.event === "tool_park";
const isAnswer = (record: JournalEntry): record is JournalEntry & ApprovalRecord =>
  record.event === "tool_approval";

/** Every park of the session, oldest first, with its answer and whether its call is closed. */
export function approvalsOf(session: Session): Approval[] {
  const answers = new Map<string, JournalEntry & ApprovalRecord>();
  for (const record of session.journal()) {
    if (isAnswer(record) && !answers.has(record.approvalId)) answers.set(record.approvalId, record);
  }
  const answered = new Set<string>();
  for (const entry of session.entries()) {
    if (entry.type === "message" && entry.message.role === "toolResult")
      answered.add(entry.message.toolCallId);
  }
  const approvals: Approval[] = [];
  for (const record of session.journal()) {
    if (!isPark(record)) continue;
    const answer = answers.get(record.approvalId);
    const approval: Approval = {
      sessionId: session.id,
      runId: record.runId,
      approvalId: record.approvalId,
      toolCallId: record.toolCallId,
      toolName: record.toolName,
      args: record.args,
      argsHash: record.argsHash,
      askedBy: record.askedBy,
      reason: record.reason,
      parkedAt: record.timestamp,
      status: answer === undefined ? "pending" : answer.decision === "allow" ? "approved" : "denied",
      done: answered.has(record.toolCallId),
    };
    if (answer !== undefined)
      approval.answer = { by: answer.by, reason: answer.reason, at: answer.timestamp };
    approvals.push(approval);
  }
  return approvals;
}

/** The parks whose calls are still open on the active branch (what a resume answers), in call order. */
export function openParks(session: Session): { park: ParkRecord; answer?: ApprovalRecord }[] {
  // Asked before every prompt: a session that never parked a call (the common case, and
  // every `rein mcp serve` session) must not pay a walk of its whole branch for it.
  if (session.journalCount("tool_park") === 0) return [];
  const open = openToolCalls(session.branch());
  if (open.length === 0) return [];
  const parks = new Map<string, ParkRecord>();
  const answers = new Map<string, ApprovalRecord>();
  for (const record of session.journal()) {
    if (isPark(record)) parks.set(record.toolCallId, record);
    else if (isAnswer(record) && !answers.has(record.approvalId)) answers.set(record.approvalId, record);
  }
  const found: { park: ParkRecord; answer?: ApprovalRecord }[] = [];
  for (const call of open) {
    const park = parks.get(call.id);
    if (park === undefined) continue;
    const answer = answers.get(park.approvalId);
    found.push(answer === undefined ? { park } : { park, answer });
  }
  return found;
}

/** Throws `parked` when the active branch ends in parked calls: a new prompt would leave them unanswered. */
export function refuseWhileParked(session: Session, operation: string): void {
  const parks = openParks(session);
  if (parks.length === 0) return;
  const ids = parks.map(({ park }) => park.approvalId).join(", ");
  throw parkedError(
    `cannot ${operation}: session ${session.id} has parked tool calls (approval ${ids}); answer them (rein approvals approve|deny) and resume the run`,
  );
}

/**
 * Records a person's answer to a parked call and syncs it. The session must be open
 * for writing (holding its lock). Refuses (`approval`) an unknown, answered or closed
 * approval, and (`approval_mismatch`) a hash other than the park's.
 */
export function resolveApproval(session: Session, approvalId: string, answer: ApprovalAnswer): Approval {
  if (answer.decision !== "allow" && answer.decision !== "deny") {
    throw invalidArgument(
      `approval answer: decision must be "allow" or "deny", not ${String(answer.decision)}`,
    );
  }
  if (typeof answer.by !== "string" || answer.by === "") {
    throw invalidArgument("approval answer: `by` must name who answers (e.g. person:alice)");
  }
  const approval = approvalsOf(session).find((candidate) => candidate.approvalId === approvalId);
  if (approval === undefined) throw approvalError(`no parked call "${approvalId}" in session ${session.id}`);
  if (approval.status !== "pending") {
    throw approvalError(
      `approval ${approvalId} was already answered (${approval.status} by ${approval.answer?.by})`,
    );
  }
  if (approval.done) throw approvalError(`approval ${approvalId}: the call already has a result`);
  if (answer.argsHash !== undefined && answer.argsHash !== approval.argsHash) {
    throw approvalMismatch(
      `approval ${approvalId}: hash ${answer.argsHash} does not match the parked call ${approval.toolName} (${approval.argsHash}); the arguments differ from what was parked`,
    );
  }
  const reason =
    answer.reason ?? (answer.decision === "allow" ? `approved by ${answer.by}` : `denied by ${answer.by}`);
  const record = session.appendJournal({
    event: "tool_approval",
    approvalId,
    toolCallId: approval.toolCallId,
    decision: answer.decision,
    by: answer.by,
    reason,
    argsHash: approval.argsHash,
  });
  session.sync({ wait: true });
  return {
    ...approval,
    status: answer.decision === "allow" ? "approved" : "denied",
    answer: { by: answer.by, reason, at: record.timestamp },
  };
}
