/**
 * What a session knows about tool calls: which calls of a branch are still open (no
 * result yet), and - from the journal and every recorded result - whether each call
 * started and finished. Recovery uses it to say "not run" only about calls that did
 * not run; a fork uses it to carry that knowledge into the new file.
 *
 * Invariant: pure reads of entries and journal records; never throws for what it reads.
 */
import { entryMessage } from "./context.js";
import type { JournalEntry, JournalRecord, RecordedToolResult, SessionEntry } from "./entries.js";

export interface OpenToolCall {
  id: string;
  name: string;
}

/** Tool calls of the branch's last assistant message that have no result after it. */
export function openToolCalls(branch: readonly SessionEntry[]): OpenToolCall[] {
  const answered = new Set<string>();
  let index = branch.length - 1;
  for (; index >= 0; index--) {
    const entry = branch[index] as SessionEntry;
    // Entries that put nothing in the context (config changes, labels, custom data) may sit after the call.
    if (entry.type !== "message" && entry.type !== "compaction" && entryMessage(entry) === undefined)
      continue;
    if (entry.type !== "message" || entry.message.role !== "toolResult") break;
    answered.add(entry.message.toolCallId);
  }
  const last = branch[index];
  if (last?.type !== "message" || last.message.role !== "assistant") return [];
  const { stopReason, content } = last.message;
  // A failed or aborted reply never runs its tool calls, and providers skip it.
  if (stopReason === "error" || stopReason === "aborted" || !Array.isArray(content)) return [];
  const calls: OpenToolCall[] = [];
  const seen = new Set<string>();
  for (const block of content as unknown[]) {
    if (typeof block !== "object" || block === null) continue;
    const { type, id, name } = block as { type?: unknown; id?: unknown; name?: unknown };
    if (type !== "toolCall" || typeof id !== "string" || answered.has(id) || seen.has(id)) continue;
    seen.add(id);
    calls.push({ id, name: typeof name === "string" ? name : "unknown" });
  }
  return calls;
}

export interface ToolCallTrace {
  runId: string;
  toolName: string;
  started: boolean;
  completed: boolean;
  isError: boolean;
}

/**
 * Per tool call id: what the journal's `tool_start` / `tool_end` records say (they are
 * written right before and after `execute`, so they are the authority). A recorded
 * result with no journal record (the journal write failed) is read conservatively: a
 * denied call never ran, a result recovery synthesized carries its own `started` /
 * `completed`, a success ran, and any other error may or may not have run.
 */
export function toolCallTraces(
  journal: readonly JournalEntry[],
  entries: readonly SessionEntry[],
): Map<string, ToolCallTrace> {
  const traces = new Map<string, ToolCallTrace>();
  for (const record of journal) {
    if (record.event !== "tool_start" && record.event !== "tool_end") continue;
    const trace = traces.get(record.toolCallId) ?? {
      runId: record.runId,
      toolName: record.toolName,
      started: true,
      completed: false,
      isError: false,
    };
    if (record.event === "tool_end") {
      trace.completed = true;
      trace.isError = record.isError;
    }
    traces.set(record.toolCallId, trace);
  }
  for (const entry of entries) {
    if (entry.type !== "message" || entry.message.role !== "toolResult") continue;
    const result = entry.message as RecordedToolResult;
    if (traces.has(result.toolCallId) || result.decision?.decision === "deny") continue;
    const details = result.details as
      | { interrupted?: unknown; started?: unknown; completed?: unknown }
      | undefined;
    const interrupted = typeof details === "object" && details !== null && details.interrupted === true;
    const started = interrupted ? details.started === true : true;
    const completed = interrupted ? details.completed === true : result.isError === false;
    if (!started) continue;
    traces.set(result.toolCallId, {
      runId: "recorded",
      toolName: result.toolName,
      started,
      completed,
      isError: result.isError === true,
    });
  }
  return traces;
}

/** Whether the journal has a run that started and never ended (running now, or crashed). */
export function hasOpenRun(journal: readonly JournalEntry[]): boolean {
  const open = new Set<string>();
  for (const record of journal) {
    if (record.event === "run_start") open.add(record.runId);
    else if (record.event === "run_end") open.delete(record.runId);
  }
  return open.size > 0;
}

/**
 * The journal records a fork of `branch` needs so that recovery on the fork tells the
 * truth about the branch's open tool calls: a call that ran (per the source's journal
 * or a recorded result) gets `tool_start` + `tool_end`; one that started and may still
 * be running gets `tool_start`; one the source knows nothing about while a run of the
 * source is still open may yet run there, so it gets `tool_start` too ("may or may not
 * have completed"). Only a call with no trace in a source with no open run is "not run".
 */
export function forkToolRecords(
  branch: readonly SessionEntry[],
  journal: readonly JournalEntry[],
  entries: readonly SessionEntry[],
): JournalRecord[] {
  const open = openToolCalls(branch);
  if (open.length === 0) return [];
  const traces = toolCallTraces(journal, entries);
  const runOpen = hasOpenRun(journal);
  const records: JournalRecord[] = [];
  for (const call of open) {
    const trace = traces.get(call.id);
    if (trace === undefined && !runOpen) continue;
    const runId = trace?.runId ?? "source";
    const toolName = trace?.toolName ?? call.name;
    records.push({ event: "tool_start", runId, toolCallId: call.id, toolName });
    if (trace?.completed) {
      records.push({ event: "tool_end", runId, toolCallId: call.id, toolName, isError: trace.isError });
    }
  }
  return records;
}
