/**
 * Session entry types: the committed facts of a session, as an append-only tree.
 *
 * Invariant: every entry except `leaf` is a node of the tree (its `parentId` is the
 * leaf at the moment it was appended, `null` for the first). A `leaf` entry is a
 * record of a leaf move, not a node: it never has children and never appears in a
 * branch. See ../../../../../shared/spec/harness.md#session.
 */
import type {
  AssistantMessage,
  ImageContent,
  Message,
  TextContent,
  ToolResultMessage,
} from "@mariozechner/pi-ai";

/** Who decided a tool call's fate, and why. Carried by `tool_decision` events and persisted tool results. */
export interface DecisionRecord {
  decision: "allow" | "deny";
  /** `"<plugin>[:<rule>]"`, or `"harness"` for the core's own decisions. */
  by: string;
  reason: string;
  /** Set when the gate said `ask` and `permissionAsk` answered. */
  askedBy?: string;
}

/** A tool result as Rein persists it: pi-ai's message plus the gate decision that led to it. */
export interface RecordedToolResult extends ToolResultMessage {
  decision?: DecisionRecord;
}

/** Every message the harness persists and sends to the model. */
export type AgentMessage = Message | RecordedToolResult;

export type { AssistantMessage, ImageContent, Message, TextContent, ToolResultMessage };

export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

interface EntryBase {
  id: string;
  parentId: string | null;
  /** Epoch milliseconds. */
  timestamp: number;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}
export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}
export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  thinkingLevel: ThinkingLevel;
}
export interface ActiveToolsChangeEntry extends EntryBase {
  type: "active_tools_change";
  activeTools: string[];
}
export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  /** First entry of the kept tail; everything before it on the branch is replaced by `summary`. */
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
}
export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  /** The leaf of the abandoned branch that was summarised. */
  fromId: string;
  summary: string;
}
export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  /** `null` removes the label. */
  label: string | null;
}
export interface LeafEntry extends EntryBase {
  type: "leaf";
  /** The new active leaf; `null` means before the first entry (empty branch). */
  targetId: string | null;
}
export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}
/** A message injected by an application or plugin; enters model context as a user message. */
export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  /** Whether UIs show it. The model always sees it. */
  display: boolean;
}
export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
  /** Application-defined metadata about the session. */
  data?: Record<string, unknown>;
}

export type SessionEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | ActiveToolsChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | LabelEntry
  | LeafEntry
  | CustomEntry
  | CustomMessageEntry
  | SessionInfoEntry;

export type SessionEntryType = SessionEntry["type"];

/** What a caller supplies; the session assigns `id`, `parentId` and `timestamp`. */
export type EntryInput = SessionEntry extends infer E
  ? E extends SessionEntry
    ? Omit<E, "id" | "parentId" | "timestamp"> & { timestamp?: number }
    : never
  : never;

export const SESSION_FORMAT_VERSION = 1;

/** First line of a JSONL session file; first record of any storage. */
export interface SessionHeader {
  type: "session";
  version: typeof SESSION_FORMAT_VERSION;
  id: string;
  /** Epoch milliseconds. */
  createdAt: number;
  cwd?: string;
  /** Set on forks: the session and entry this one was forked from. */
  forkedFrom?: { sessionId: string; entryId: string };
}

/** The model-facing projection of the active branch. */
export interface SessionContext {
  messages: AgentMessage[];
  /** The branch's latest model change, if any. */
  model?: { provider: string; modelId: string };
  thinkingLevel?: ThinkingLevel;
  activeTools?: string[];
  /** The latest compaction on the branch, when one applies. */
  compaction?: AppliedCompaction;
}

export interface AppliedCompaction {
  entryId: string;
  summary: string;
  firstKeptEntryId: string;
  /**
   * Index in `messages` of the first message recorded after the compaction: the ones
   * before it are the summary and the kept tail (their usage figures predate the compaction).
   */
  firstNewMessage: number;
  details?: unknown;
}
