/**
 * Tree navigation: move the active leaf to any tree entry, optionally recording
 * a `branch_summary` of the branch being left.
 *
 * Invariants:
 * - nothing is written unless the navigation succeeds: the summary (the
 *   caller's, a `beforeBranch` tap's, or the model's) is complete before the
 *   leaf moves; a cancel, a hook failure, a summarizer failure or an abort
 *   leave the leaf where it was;
 * - the writes are one `leaf` entry, then (with a summary) one `branch_summary`
 *   child of the target, so the new branch reads "target, summary of what was
 *   tried elsewhere"; both go in one write group (`Session.appendAll`), so a crash
 *   never leaves the leaf moved without its summary.
 */
import { describeError, invalidArgument, isHarnessError } from "../errors.js";
import { runBail } from "../hooks/create-hooks.js";
import { compactionSummaryMessage, entryMessage } from "../session/context.js";
import type { AgentMessage, SessionEntry } from "../session/entries.js";
import { abortError, modelSummary, type OperationHost } from "./compaction-run.js";

export interface NavigateOptions {
  /** Summarise the abandoned branch with the model (unless a summary is supplied). */
  summarize?: boolean;
  /** The abandoned branch's summary, written by the caller. */
  summary?: string;
  /** Extra instructions for a model-written summary. */
  instructions?: string;
}

export interface NavigateOutcome {
  status: "done" | "cancelled";
  reason?: string;
  /** The `branch_summary` entry recorded, if any. */
  summaryEntryId?: string;
}

/** Throws `invalid_argument` unless `targetId` is `null` or a tree entry of the session. */
export function checkTarget(host: OperationHost, targetId: string | null): void {
  if (targetId === null) return;
  const entry = host.session.getEntry(targetId);
  if (entry === undefined) {
    throw invalidArgument(`navigateTree: no entry "${targetId}" in session ${host.session.id}`);
  }
  if (entry.type === "leaf") {
    throw invalidArgument(`navigateTree: "${targetId}" is a leaf move, not a tree entry`);
  }
}

/** The entries of the current branch that the target's branch does not share, oldest first. */
export function abandonedEntries(host: OperationHost, targetId: string | null): SessionEntry[] {
  const kept = new Set(host.session.branch(targetId).map((entry) => entry.id));
  return host.session.branch().filter((entry) => !kept.has(entry.id));
}

export async function runNavigation(
  host: OperationHost,
  targetId: string | null,
  options: NavigateOptions,
  signal: AbortSignal,
): Promise<NavigateOutcome> {
  const { session } = host;
  const fromId = session.leafId;
  const abandoned = fromId === targetId ? [] : abandonedEntries(host, targetId);
  const messages = abandonedMessages(abandoned);
  const summarize = options.summary !== undefined || options.summarize === true;

  await host.emit({ type: "branch_start", targetId, fromId });
  try {
    const decision = await runBail(
      host.hooks,
      "beforeBranch",
      { fromId, targetId, summarize, messages },
      host.hookContext(signal),
    );
    if (decision && "cancel" in decision) {
      const reason = `${decision.cancel.reason} (by ${decision.by})`;
      await host.emit({ type: "branch_end", targetId, status: "cancelled", detail: reason, by: decision.by });
      return { status: "cancelled", reason };
    }
    let summary: string | undefined;
    let by: string | undefined;
    if (decision && "summary" in decision) {
      summary = decision.summary;
      by = decision.by;
    } else if (options.summary !== undefined) {
      summary = options.summary;
      by = "caller";
    } else if (options.summarize === true && messages.length > 0) {
      summary = await modelSummary(host, "branch", messages, undefined, {
        signal,
        instructions: options.instructions,
      });
      by = "model";
    }
    if (signal.aborted) throw abortError(signal);

    const outcome: NavigateOutcome = { status: "done" };
    if (fromId !== targetId) {
      // One write group: a crash leaves the leaf moved with its summary, or neither.
      const summaryInput =
        summary !== undefined && fromId !== null
          ? [{ type: "branch_summary" as const, fromId, summary }]
          : [];
      const written = session.appendAll([{ type: "leaf", targetId }, ...summaryInput]);
      if (written[1] !== undefined) outcome.summaryEntryId = written[1].id;
      const stored = session.whenStored(); // an asynchronous storage: stored before broadcast
      if (stored) await stored;
    }
    await host.emit({
      type: "branch_end",
      targetId,
      status: "done",
      ...(outcome.summaryEntryId === undefined ? {} : { summaryEntryId: outcome.summaryEntryId }),
      ...(by === undefined || outcome.summaryEntryId === undefined ? {} : { by }),
    });
    return outcome;
  } catch (error) {
    const aborted = isHarnessError(error, "aborted") || (signal.aborted && !isHarnessError(error, "hook"));
    await host.emit({
      type: "branch_end",
      targetId,
      status: aborted ? "aborted" : "failed",
      detail: describeError(error),
    });
    throw aborted && !isHarnessError(error, "aborted") ? abortError(signal, error) : error;
  }
}

/** What the abandoned entries said, as messages (a compaction among them contributes its summary). */
function abandonedMessages(entries: readonly SessionEntry[]): AgentMessage[] {
  const messages: AgentMessage[] = [];
  for (const entry of entries) {
    const message =
      entry.type === "compaction"
        ? compactionSummaryMessage(entry.summary, entry.timestamp)
        : entryMessage(entry);
    if (message !== undefined) messages.push(message);
  }
  return messages;
}
