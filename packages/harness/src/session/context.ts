/**
 * The model-facing projection of one branch: its messages (after the latest
 * compaction) and its latest model, thinking level and active tools.
 *
 * Invariant: a `BranchContext` always equals the projection of the branch that ends
 * at its `leafId`, whether it was built from the whole branch or extended one child
 * entry at a time; only a compaction cannot be applied incrementally (it replaces
 * the prefix), so `extend` refuses it and the owner rebuilds.
 */
import type {
  AgentMessage,
  AppliedCompaction,
  SessionContext,
  SessionEntry,
  ThinkingLevel,
} from "./entries.js";

export const COMPACTION_SUMMARY_PREFIX =
  "The earlier part of this conversation was compacted to save context. This is its summary:\n\n";
export const BRANCH_SUMMARY_PREFIX =
  "The conversation explored another branch before returning here. This is a summary of that branch:\n\n";

/** The user message that stands in for everything a compaction replaced. */
export function compactionSummaryMessage(summary: string, timestamp: number): AgentMessage {
  const text = `${COMPACTION_SUMMARY_PREFIX}<summary>\n${summary}\n</summary>`;
  return { role: "user", content: [{ type: "text", text }], timestamp };
}

/** The message an entry contributes to the context, if any. */
export function entryMessage(entry: SessionEntry): AgentMessage | undefined {
  switch (entry.type) {
    case "message":
      return entry.message;
    case "custom_message":
      return { role: "user", content: entry.content, timestamp: entry.timestamp };
    case "branch_summary": {
      const text = `${BRANCH_SUMMARY_PREFIX}<branch_summary>\n${entry.summary}\n</branch_summary>`;
      return { role: "user", content: [{ type: "text", text }], timestamp: entry.timestamp };
    }
    default:
      return undefined;
  }
}

export class BranchContext {
  /** The branch's last entry; `null` for the empty branch. */
  leafId: string | null;
  readonly #messages: AgentMessage[] = [];
  #model: { provider: string; modelId: string } | undefined;
  #thinkingLevel: ThinkingLevel | undefined;
  #activeTools: string[] | undefined;
  #compaction: AppliedCompaction | undefined;

  private constructor(leafId: string | null) {
    this.leafId = leafId;
  }

  /** Projects `branch` (root first, tree entries only) in one pass. */
  static build(branch: readonly SessionEntry[]): BranchContext {
    const context = new BranchContext(branch.at(-1)?.id ?? null);
    let compaction = -1;
    for (let i = 0; i < branch.length; i++) {
      const entry = branch[i] as SessionEntry;
      context.#applySettings(entry);
      if (entry.type === "compaction") compaction = i;
    }
    let from = 0;
    if (compaction >= 0) {
      const entry = branch[compaction] as Extract<SessionEntry, { type: "compaction" }>;
      context.#messages.push(compactionSummaryMessage(entry.summary, entry.timestamp));
      // The kept tail starts at firstKeptEntryId if it precedes the compaction on this
      // branch; otherwise nothing before the compaction is kept.
      from = compaction + 1;
      for (let i = 0; i < compaction; i++) {
        if ((branch[i] as SessionEntry).id === entry.firstKeptEntryId) {
          from = i;
          break;
        }
      }
    }
    for (let i = from; i < branch.length; i++) {
      if (i === compaction) {
        const entry = branch[i] as Extract<SessionEntry, { type: "compaction" }>;
        context.#compaction = {
          entryId: entry.id,
          summary: entry.summary,
          firstKeptEntryId: entry.firstKeptEntryId,
          firstNewMessage: context.#messages.length,
        };
        if (entry.details !== undefined) context.#compaction.details = entry.details;
        continue;
      }
      const message = entryMessage(branch[i] as SessionEntry);
      if (message !== undefined) context.#messages.push(message);
    }
    return context;
  }

  /**
   * Adds `entry`, a child of `leafId`, in O(1). Returns false (and changes nothing)
   * for a compaction, which needs a rebuild.
   */
  extend(entry: SessionEntry): boolean {
    if (entry.type === "compaction" || entry.type === "leaf") return false;
    this.#applySettings(entry);
    const message = entryMessage(entry);
    if (message !== undefined) this.#messages.push(message);
    this.leafId = entry.id;
    return true;
  }

  /** A copy the caller may mutate without touching this context. */
  snapshot(): SessionContext {
    const context: SessionContext = { messages: this.#messages.slice() };
    if (this.#model !== undefined) context.model = { ...this.#model };
    if (this.#thinkingLevel !== undefined) context.thinkingLevel = this.#thinkingLevel;
    if (this.#activeTools !== undefined) context.activeTools = this.#activeTools.slice();
    if (this.#compaction !== undefined) context.compaction = { ...this.#compaction };
    return context;
  }

  #applySettings(entry: SessionEntry): void {
    switch (entry.type) {
      case "model_change":
        this.#model = { provider: entry.provider, modelId: entry.modelId };
        break;
      case "thinking_level_change":
        this.#thinkingLevel = entry.thinkingLevel;
        break;
      case "active_tools_change":
        this.#activeTools = entry.activeTools;
        break;
    }
  }
}
