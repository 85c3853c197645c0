/**
 * A session read as a transcript: the active branch's messages with each tool call
 * paired to its result and gate decision, plus the whole entry tree. Shared by the
 * Markdown and HTML exports and `sessions show`.
 */

import type { AgentMessage, AssistantMessage, DecisionRecord, Session, SessionEntry } from "@rein/harness";
import { RESULT_ENTRY_TYPE } from "../hook/audit-entries.js";

export interface ToolCallView {
  id: string;
  name: string;
  args: unknown;
  result?: { text: string; isError: boolean };
  decision?: DecisionRecord;
}

export type TranscriptItem =
  | { kind: "user"; text: string; entryId: string }
  | {
      kind: "assistant";
      text: string;
      entryId: string;
      toolCalls: ToolCallView[];
      error?: string;
      model: string;
      /** The message's recorded usage (tokens, cost). */
      usage?: AssistantMessage["usage"];
    }
  | { kind: "note"; text: string; entryId: string };

export interface TreeNode {
  entry: SessionEntry;
  children: TreeNode[];
}

export const contentText = (content: unknown): string => {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: string; text?: string; mimeType?: string }) =>
      block.type === "text"
        ? (block.text ?? "")
        : block.type === "image"
          ? `[image ${block.mimeType ?? ""}]`
          : "",
    )
    .filter(Boolean)
    .join("\n");
};

export function transcript(session: Session): TranscriptItem[] {
  const items: TranscriptItem[] = [];
  const pending = new Map<string, ToolCallView>();
  for (const entry of session.branch()) {
    if (entry.type === "message") addMessage(entry.message, entry.id, items, pending);
    else if (entry.type === "compaction")
      items.push({ kind: "note", text: `compacted: ${entry.summary}`, entryId: entry.id });
    else if (entry.type === "branch_summary")
      items.push({ kind: "note", text: `branch summary: ${entry.summary}`, entryId: entry.id });
    else if (entry.type === "custom_message")
      items.push({ kind: "user", text: contentText(entry.content), entryId: entry.id });
    else if (entry.type === "model_change")
      items.push({ kind: "note", text: `model: ${entry.provider}/${entry.modelId}`, entryId: entry.id });
    else if (entry.type === "custom" && entry.customType === RESULT_ENTRY_TYPE)
      items.push({ kind: "note", text: agentResultText(entry.data), entryId: entry.id });
  }
  return items;
}

/** What an agent's tool returned (a `rein hook` PostToolUse record), in one line. */
function agentResultText(data: unknown): string {
  const { agent, tool, response } = (data ?? {}) as { agent?: string; tool?: string; response?: unknown };
  const output =
    typeof response === "string"
      ? response
      : typeof (response as { stdout?: unknown } | null)?.stdout === "string"
        ? (response as { stdout: string }).stdout
        : JSON.stringify(response ?? null);
  const text = output.trim().replace(/\s+/g, " ");
  return `${agent ?? "the agent"} ran ${tool ?? "a tool"}: ${text.length > 200 ? `${text.slice(0, 199)}…` : text}`;
}

function addMessage(
  message: AgentMessage,
  entryId: string,
  items: TranscriptItem[],
  pending: Map<string, ToolCallView>,
) {
  if (message.role === "user") {
    items.push({ kind: "user", text: contentText(message.content), entryId });
  } else if (message.role === "assistant") {
    const toolCalls: ToolCallView[] = [];
    for (const block of message.content) {
      if (block.type === "toolCall") {
        const view: ToolCallView = { id: block.id, name: block.name, args: block.arguments };
        toolCalls.push(view);
        pending.set(block.id, view);
      }
    }
    const text = message.content
      .filter((block) => block.type === "text")
      .map((block) => (block.type === "text" ? block.text : ""))
      .join("");
    const item: TranscriptItem = { kind: "assistant", text, entryId, toolCalls, model: message.model };
    if (message.usage) item.usage = message.usage;
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      item.error = message.errorMessage ?? message.stopReason;
    }
    items.push(item);
  } else if (message.role === "toolResult") {
    const view = pending.get(message.toolCallId);
    if (view) {
      view.result = { text: contentText(message.content), isError: message.isError };
      if ("decision" in message && message.decision) view.decision = message.decision as DecisionRecord;
    }
  }
}

export function entryTree(session: Session): TreeNode[] {
  const nodes = new Map<string, TreeNode>();
  const roots: TreeNode[] = [];
  for (const entry of session.entries()) {
    if (entry.type === "leaf") continue;
    const node: TreeNode = { entry, children: [] };
    nodes.set(entry.id, node);
    const parent = entry.parentId === null ? undefined : nodes.get(entry.parentId);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

/** One line describing an entry, for trees. */
export function describeEntry(entry: SessionEntry): string {
  switch (entry.type) {
    case "message": {
      const m = entry.message;
      if (m.role === "user") return `user: ${contentText(m.content)}`;
      if (m.role === "toolResult") return `result ${m.toolName}${m.isError ? " (error)" : ""}`;
      const calls = m.content
        .filter((b) => b.type === "toolCall")
        .map((b) => (b.type === "toolCall" ? b.name : ""));
      const text = m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
      return `assistant: ${text || (calls.length ? `calls ${calls.join(", ")}` : (m.errorMessage ?? ""))}`;
    }
    case "model_change":
      return `model ${entry.provider}/${entry.modelId}`;
    case "thinking_level_change":
      return `thinking ${entry.thinkingLevel}`;
    case "active_tools_change":
      return `tools ${entry.activeTools.join(", ") || "(none)"}`;
    case "compaction":
      return "compaction";
    case "branch_summary":
      return "branch summary";
    case "label":
      return `label ${entry.label ?? "(removed)"}`;
    case "custom":
      return `custom ${entry.customType}`;
    case "custom_message":
      return `message ${entry.customType}`;
    case "session_info":
      return `info ${entry.name ?? ""}`;
    default:
      return entry.type;
  }
}
