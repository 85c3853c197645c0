/**
 * What a recorded session says about its tool calls, read once for `rein replay`:
 * every call in the order it was made (file order, so abandoned branches too),
 * the decision and result persisted with it, and the runs the calls belong to.
 *
 * Invariant: read only; a call with no persisted result (a crash before it was
 * decided) is `unknown`, never guessed.
 */
import type { UserMessage } from "@earendil-works/pi-ai";
import {
  type AssistantMessage,
  type DecisionRecord,
  type JournalRunStatus,
  type RecordedToolResult,
  type Session,
  type SessionEntry,
  SKILL_ENTRY,
} from "@rein/harness";

/** A gate-level verdict: any ask, answered or not, is `ask`. */
export type Verdict = "allow" | "ask" | "deny" | "unknown";

/** What sessions recorded before `unanswered` existed said in the reason instead. */
const UNANSWERED_SUFFIX = "(asked, but no permission handler answered: denied)";

export function wasAsked(decision: DecisionRecord): boolean {
  return (
    decision.askedBy !== undefined ||
    decision.unanswered === true ||
    (decision.decision === "deny" && decision.reason.endsWith(UNANSWERED_SUFFIX))
  );
}

/** The gate-level verdict a recorded result shows: any ask, answered or not, counts as `ask`. */
export function recordedVerdict(decision: DecisionRecord | undefined): Verdict {
  if (!decision) return "unknown";
  return wasAsked(decision) ? "ask" : decision.decision;
}

export interface RecordedCall {
  entryId: string;
  toolCallId: string;
  tool: string;
  args: Record<string, unknown>;
  decision?: DecisionRecord;
  result?: RecordedToolResult;
}

/** One recorded run: the prompt that started it and the model's replies, in order. */
export interface RecordedRun {
  prompt: UserMessage;
  replies: AssistantMessage[];
  /** Messages a queue put into the run (steering, follow-ups), after how many replies. */
  injected: { afterReplies: number; queue: "steer" | "followUp"; message: UserMessage }[];
  /** `nextTurn` messages injected before the prompt. */
  nextTurn: UserMessage[];
  /**
   * How the run ended, from the session's journal (absent in sessions without one).
   * `aborted` and `interrupted` runs were stopped from outside the replies: by the
   * user, or by a plugin's `stopRun`.
   */
  status?: JournalRunStatus;
  /** The skill a person invoked to start the run (`/name args`): replayed with `skill()`, so it narrows again. */
  skill?: { name: string; args: string[] };
  /** The run was started with `stopAfterTools` (its `run_start` says so): replayed with it. */
  stopAfterTools?: true;
}

export interface RecordedSession {
  calls: RecordedCall[];
  runs: RecordedRun[];
  /** Session grants by the call whose answer made them (see `GRANT_ENTRY_TYPE`). */
  grants: Map<string, unknown[]>;
}

/**
 * @rein/plugin-permissions' session grant entry. A grant is written while a call's
 * ask is answered ("allow for this session"); the replay answers that call from the
 * record, so it gives the grant back there, for calls the current stack asks about
 * that the record did not.
 */
export const GRANT_ENTRY_TYPE = "rein.permission-grant";

/** The call a grant entry was given for: in the latest reply, asked by the grant's decider and allowed. */
function grantedCall(calls: readonly RecordedCall[], data: unknown): RecordedCall | undefined {
  const grant = data as { tool?: unknown; askedBy?: unknown } | undefined;
  return calls.find(
    (call) =>
      call.tool === grant?.tool &&
      call.decision?.askedBy === grant?.askedBy &&
      call.decision?.decision === "allow",
  );
}

const isUser = (entry: SessionEntry): entry is SessionEntry & { type: "message"; message: UserMessage } =>
  entry.type === "message" && entry.message.role === "user";

export function readRecorded(session: Session): RecordedSession {
  const entries = session.entries();
  const results = new Map<string, RecordedToolResult>();
  for (const entry of entries) {
    if (entry.type === "message" && entry.message.role === "toolResult") {
      results.set(entry.message.toolCallId, entry.message as RecordedToolResult);
    }
  }
  const calls: RecordedCall[] = [];
  const runs: RecordedRun[] = [];
  /** The run each entry belongs to, to place the journal's run ends. */
  const runOf = new Map<string, RecordedRun>();
  const grants = new Map<string, unknown[]>();
  let replyCalls: RecordedCall[] = [];
  // Which queue a queued message came from (journal), so steering stays inside its run.
  const queueOf = new Map<string, string>();
  for (const record of session.journal()) {
    if (record.event === "queue_push") queueOf.set(record.queueId, record.queue);
  }
  let nextTurn: UserMessage[] = [];
  let invoked: RecordedRun["skill"];
  for (const entry of entries) {
    if (entry.type === "custom" && entry.customType === SKILL_ENTRY) {
      const data = entry.data as { name?: unknown; args?: unknown; via?: unknown };
      if (data?.via === "invoke" && typeof data.name === "string")
        invoked = { name: data.name, args: Array.isArray(data.args) ? data.args.map(String) : [] };
    }
    if (isUser(entry)) {
      const queues = (entry.queueIds ?? []).map((id) => queueOf.get(id));
      const into = runs[runs.length - 1];
      const queue = queues.find((q) => q === "steer" || q === "followUp") as "steer" | "followUp" | undefined;
      if (queue && into)
        into.injected.push({ afterReplies: into.replies.length, queue, message: entry.message });
      else if (queues.includes("nextTurn")) nextTurn.push(entry.message);
      else {
        runs.push({
          prompt: entry.message,
          replies: [],
          injected: [],
          nextTurn,
          ...(invoked ? { skill: invoked } : {}),
        });
        nextTurn = [];
        invoked = undefined;
      }
    }
    const current = runs[runs.length - 1];
    // Every entry (a plugin's own too: a run's last write may be one) names its run.
    if (current) runOf.set(entry.id, current);
    if (entry.type === "custom" && entry.customType === GRANT_ENTRY_TYPE) {
      // Written while the latest reply's calls were decided (committed at the next save point).
      const call = grantedCall(replyCalls, entry.data);
      if (call) grants.set(call.toolCallId, [...(grants.get(call.toolCallId) ?? []), entry.data]);
      continue;
    }
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    // Replies before any prompt (a hand-built session) still replay, after an empty prompt.
    if (runs.length === 0)
      runs.push({
        prompt: { role: "user", content: "", timestamp: 0 },
        replies: [],
        injected: [],
        nextTurn: [],
      });
    const run = runs[runs.length - 1] as RecordedRun;
    runOf.set(entry.id, run);
    run.replies.push(entry.message);
    replyCalls = [];
    for (const block of entry.message.content) {
      if (block.type !== "toolCall") continue;
      const call: RecordedCall = {
        entryId: entry.id,
        toolCallId: block.id,
        tool: block.name,
        args: block.arguments,
      };
      const result = results.get(block.id);
      if (result) {
        call.result = result;
        if (result.decision) call.decision = result.decision;
      }
      calls.push(call);
      replyCalls.push(call);
    }
  }
  // A run's end is journaled with the leaf at that moment: the run's last entry. Its
  // start (same runId) carries the options it ran with.
  const stoppingAfterTools = new Set<string>();
  for (const record of session.journal()) {
    if (record.event === "run_start" && record.stopAfterTools === true) stoppingAfterTools.add(record.runId);
    if (record.event !== "run_end" || record.parentId === null) continue;
    const run = runOf.get(record.parentId);
    if (!run) continue;
    run.status = record.status;
    if (stoppingAfterTools.has(record.runId)) run.stopAfterTools = true;
  }
  return { calls, runs, grants };
}
