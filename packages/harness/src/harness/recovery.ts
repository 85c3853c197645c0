/**
 * Recovery of a session a process left behind (spec "Durable runs"): reduces the
 * journal and the committed entries to what a crash left open, and closes it.
 *
 * Invariants:
 * - Every tool call of the active branch's last assistant message gets exactly one
 *   result: the missing ones get a synthesized error result saying what is known
 *   (not run / may or may not have completed / completed but not recorded), and
 *   that an `idempotent` tool may be retried. Except a parked message: while one of
 *   its open calls is parked (`tool_park`) and never started, its open calls are left
 *   open for a person's answer and `resume()`; a parked call that started (a resume
 *   crashed) is closed like any other, so no call runs twice.
 * - An unfinished run (a `run_start` with no `run_end`) is closed with
 *   `run_end { status: "interrupted" }`, after a turn left without an answer (the
 *   branch's context ends in a user message, whatever entry is the leaf) got a
 *   closed `aborted` assistant message and after uncommitted pending writes were
 *   committed (each carrying its `pendingId`, so a second recovery never repeats one).
 * - Queued messages: pending = pushed - consumed (`queueIds` on message entries,
 *   `queue_take`) - cleared (`queue_clear`), in push order, per queue. They are
 *   handed back to the harness and not journaled again (their pushes are on file).
 * - Recovery runs once per `Session` object, and never throws for what it reads:
 *   a write that fails is reported as a warning and nothing after it is written, so
 *   the next open repairs the rest.
 */
import type { Model } from "@earendil-works/pi-ai";
import { describeError } from "../errors.js";
import type { QueueName } from "../events/event-types.js";
import type { LoopTurn } from "../loop/loop-types.js";
import { failureMessage } from "../loop/stream-assistant.js";
import { openParks } from "../session/approvals.js";
import type { AgentMessage, EntryInput, RecordedToolResult } from "../session/entries.js";
import type { Session } from "../session/session.js";
import { openToolCalls } from "../session/tool-call-state.js";
import type { AnyAgentTool } from "../tools.js";
import type { QueuedMessage } from "./message-queues.js";

/** A tool call that recovery answered with a synthesized error result. */
export interface RecoveredToolCall {
  toolCallId: string;
  toolName: string;
  /** The journal saw the tool start executing. */
  started: boolean;
  /** The journal saw the tool finish (its result was not recorded). */
  completed: boolean;
  /** The tool declares itself idempotent: the result says it may be retried. */
  idempotent: boolean;
}

/** What recovery repaired or restored when a harness opened its session. */
export interface RecoveryReport {
  /** The unfinished run, now closed with `run_end { status: "interrupted" }`. */
  interruptedRunId?: string;
  /** Tool calls that had no result and got a synthesized one, in call order. */
  toolResults: RecoveredToolCall[];
  /** A turn left without an answer was closed with an `aborted` assistant message. */
  closedTurn: boolean;
  /** Accepted queue messages that were not consumed, restored per queue. */
  queues: Record<QueueName, number>;
  /** Pending writes found uncommitted, committed now. */
  pendingWrites: number;
  /** What could not be repaired (a failed write, a pending write the session refused). */
  warnings: string[];
}

export interface RecoveryResult {
  /** `undefined` when there was nothing to repair or restore. */
  report: RecoveryReport | undefined;
  /** Queued messages to put back, per queue, in push order. */
  queues: Record<QueueName, QueuedMessage[]>;
}

export interface RecoveryOptions {
  tools: readonly AnyAgentTool[];
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
}

export const INTERRUPTED_NOT_RUN = "interrupted: the tool was not run";
export const INTERRUPTED_UNKNOWN = "interrupted: the tool may or may not have completed";
export const INTERRUPTED_UNRECORDED = "interrupted: the tool completed but its result was not recorded";
export const RETRY_NOTE = "; the tool is idempotent and may be retried";

const recovered = new WeakSet<Session>();

const QUEUE_NAMES: readonly QueueName[] = ["steer", "followUp", "nextTurn"];

interface ToolTrace {
  started: boolean;
  completed: boolean;
}

export function recoverSession(session: Session, options: RecoveryOptions): RecoveryResult {
  const queues: Record<QueueName, QueuedMessage[]> = { steer: [], followUp: [], nextTurn: [] };
  if (recovered.has(session)) return { report: undefined, queues };
  recovered.add(session);

  // ---- reduce the journal ----
  let openRun: string | undefined;
  const tools = new Map<string, ToolTrace>();
  const removed = new Set<string>();
  const pending: { id: string; input: EntryInput }[] = [];
  for (const record of session.journal()) {
    switch (record.event) {
      case "run_start":
        openRun = record.runId;
        break;
      case "run_end":
        if (openRun === record.runId) openRun = undefined;
        break;
      case "tool_start":
        tools.set(record.toolCallId, { started: true, completed: false });
        break;
      case "tool_end": {
        const trace = tools.get(record.toolCallId) ?? { started: true, completed: false };
        trace.completed = true;
        tools.set(record.toolCallId, trace);
        break;
      }
      case "queue_push":
        queues[record.queue].push({ id: record.queueId, message: record.message });
        break;
      case "queue_clear":
      case "queue_take":
        for (const id of record.queueIds) removed.add(id);
        break;
      case "pending_write":
        pending.push({ id: record.pendingId, input: record.input });
        break;
      default:
        break; // an event of a newer writer: nothing to recover from it
    }
  }
  const committed = new Set<string>();
  for (const entry of session.entries()) {
    if (typeof entry.pendingId === "string") committed.add(entry.pendingId);
    if (entry.type === "message" && Array.isArray(entry.queueIds)) {
      for (const id of entry.queueIds) removed.add(id);
    }
  }
  const report: RecoveryReport = {
    toolResults: [],
    closedTurn: false,
    queues: { steer: 0, followUp: 0, nextTurn: 0 },
    pendingWrites: 0,
    warnings: [],
  };
  for (const queue of QUEUE_NAMES) {
    queues[queue] = queues[queue].filter((item) => !removed.has(item.id));
    report.queues[queue] = queues[queue].length;
  }
  const uncommitted = pending.filter((write) => !committed.has(write.id));

  // ---- what to write, in order ----
  const writes: (() => void)[] = [];
  const open = openToolCalls(session.branch());
  const parked = new Set(openParks(session).map(({ park }) => park.toolCallId));
  const waiting = open.some((call) => parked.has(call.id) && tools.get(call.id) === undefined);
  const missing = waiting ? [] : open;
  for (const call of missing) {
    const trace = tools.get(call.id);
    const tool = options.tools.find((candidate) => candidate.name === call.name);
    const recoveredCall: RecoveredToolCall = {
      toolCallId: call.id,
      toolName: call.name,
      started: trace?.started ?? false,
      completed: trace?.completed ?? false,
      idempotent: tool?.idempotent === true,
    };
    report.toolResults.push(recoveredCall);
    writes.push(() => session.appendMessage(interruptedResult(recoveredCall)));
  }
  if (openRun !== undefined && open.length === 0 && awaitsAnswer(session)) {
    report.closedTurn = true;
    writes.push(() =>
      session.appendMessage(
        failureMessage(
          { model: options.model } as LoopTurn,
          "interrupted: the process stopped before the model answered",
          true,
        ),
      ),
    );
  }
  for (const write of uncommitted) {
    writes.push(() => {
      try {
        session.append({ ...write.input, pendingId: write.id } as EntryInput);
        report.pendingWrites++;
      } catch (error) {
        if ((error as { code?: string }).code !== "invalid_argument") throw error;
        report.warnings.push(`pending write ${write.id} could not be committed: ${describeError(error)}`);
      }
    });
  }
  if (openRun !== undefined) {
    report.interruptedRunId = openRun;
    const runId = openRun;
    writes.push(() => session.appendJournal({ event: "run_end", runId, status: "interrupted" }));
  }

  const restored = QUEUE_NAMES.some((queue) => report.queues[queue] > 0);
  if (writes.length === 0 && !restored) return { report: undefined, queues };
  try {
    for (const write of writes) write();
    if (writes.length > 0) session.sync();
  } catch (error) {
    report.warnings.push(`recovery could not write to session ${session.id}: ${describeError(error)}`);
  }
  session.warnings.push(describeRecovery(report));
  return { report, queues };
}

/**
 * Whether the branch's context ends in a request the model never answered: its last
 * message is a user message (a prompt, a steer, a custom message, a branch or
 * compaction summary), wherever the leaf stands - on the message itself, or on a
 * compaction, a config change or a label written after it.
 */
function awaitsAnswer(session: Session): boolean {
  return session.buildContext().messages.at(-1)?.role === "user";
}

function interruptedResult(call: RecoveredToolCall): AgentMessage {
  const base = !call.started
    ? INTERRUPTED_NOT_RUN
    : call.completed
      ? INTERRUPTED_UNRECORDED
      : INTERRUPTED_UNKNOWN;
  const text = call.started && call.idempotent ? `${base}${RETRY_NOTE}` : base;
  const result: RecordedToolResult = {
    role: "toolResult",
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    content: [{ type: "text", text }],
    details: {
      interrupted: true,
      started: call.started,
      completed: call.completed,
      idempotent: call.idempotent,
    },
    isError: true,
    timestamp: Date.now(),
  };
  return result;
}

function describeRecovery(report: RecoveryReport): string {
  const parts: string[] = [];
  if (report.interruptedRunId !== undefined) parts.push(`closed interrupted run ${report.interruptedRunId}`);
  if (report.toolResults.length > 0) parts.push(`synthesized ${report.toolResults.length} tool result(s)`);
  if (report.closedTurn) parts.push("closed an unanswered turn");
  if (report.pendingWrites > 0) parts.push(`committed ${report.pendingWrites} pending write(s)`);
  const queued = QUEUE_NAMES.filter((queue) => report.queues[queue] > 0).map(
    (queue) => `${report.queues[queue]} ${queue}`,
  );
  if (queued.length > 0) parts.push(`restored queued messages (${queued.join(", ")})`);
  for (const warning of report.warnings) parts.push(warning);
  return `recovery: ${parts.join("; ")}`;
}
