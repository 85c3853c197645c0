/**
 * Where a compaction cuts a branch: everything before the first kept entry is
 * replaced by a summary, the rest stays verbatim. Pure functions over entries.
 *
 * Invariants:
 * - the first kept entry is a *cut point*: a user or (successful) assistant
 *   message, a `custom_message` or a `branch_summary`; never a tool result, so a
 *   tool call and its results always stay on the same side (results follow their call);
 * - the kept tail is the longest one whose estimate fits `keepRecentTokens`;
 *   when not even the last turn fits, the latest cut point is kept (at least
 *   the current request stays verbatim);
 * - something is always left to summarise: a cut at the first context entry is no cut.
 */
import { entryMessage } from "../session/context.js";
import type { CompactionEntry, SessionEntry } from "../session/entries.js";
import { estimateMessageTokens } from "./token-estimate.js";

export interface BranchInContext {
  /** The latest compaction on the branch, if any. */
  compaction: CompactionEntry | undefined;
  /**
   * The tree entries whose messages make up the context after the summary, in
   * order: the latest compaction's kept tail, then everything after it (the
   * compaction entry itself excluded).
   */
  entries: SessionEntry[];
}

/** Splits a branch (root first) the way `buildContext` projects it. */
export function branchInContext(branch: readonly SessionEntry[]): BranchInContext {
  let at = -1;
  for (let i = branch.length - 1; i >= 0; i--) {
    if ((branch[i] as SessionEntry).type === "compaction") {
      at = i;
      break;
    }
  }
  if (at < 0) return { compaction: undefined, entries: branch.slice() };
  const compaction = branch[at] as CompactionEntry;
  let from = at + 1;
  for (let i = 0; i < at; i++) {
    if ((branch[i] as SessionEntry).id === compaction.firstKeptEntryId) {
      from = i;
      break;
    }
  }
  const entries = branch.slice(from).filter((entry) => entry !== compaction);
  return { compaction, entries };
}

/** Whether the kept tail may start at this entry. */
export function isCutPoint(entry: SessionEntry): boolean {
  switch (entry.type) {
    case "message": {
      const { message } = entry;
      if (message.role === "user") return true;
      // A failed assistant message is skipped when sending: a tail starting there starts nowhere.
      return (
        message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted"
      );
    }
    case "custom_message":
    case "branch_summary":
      return true;
    default:
      return false;
  }
}

/** Estimated tokens an entry contributes to the context. */
export function entryTokens(entry: SessionEntry): number {
  const message = entryMessage(entry);
  return message === undefined ? 0 : estimateMessageTokens(message);
}

/**
 * Index in `entries` of the first kept entry, or `undefined` when nothing can be
 * summarised (no cut point after the first entry).
 */
export function findCutPoint(
  entries: readonly SessionEntry[],
  keepRecentTokens: number,
  tokensOf: (entry: SessionEntry) => number = entryTokens,
): number | undefined {
  let best: number | undefined;
  let latest: number | undefined;
  let kept = 0;
  for (let i = entries.length - 1; i >= 1; i--) {
    const entry = entries[i] as SessionEntry;
    kept += tokensOf(entry);
    const cut = isCutPoint(entry);
    if (cut && latest === undefined) latest = i;
    if (kept > keepRecentTokens) {
      if (latest !== undefined) break;
      continue; // not even the last turn fits: keep looking for the latest cut point
    }
    if (cut) best = i;
  }
  return best ?? latest;
}
