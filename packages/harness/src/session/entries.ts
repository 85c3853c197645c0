/**
 * Session entry types: the committed facts of a session, as an append-only tree.
 *
 * Invariant: every entry except `leaf` is a node of the tree (its `parentId` is the
 * leaf at the moment it was appended, `null` for the first). A `leaf` entry is a
 * record of a leaf move, not a node: it never has children and never appears in a
 * branch. A `journal` entry (durable runs) is not a node either: it records what a
 * run was doing, is kept apart from `entries()`, and never enters model context.
 * See ../../../../../shared/spec/harness.md#session.
 */
import type {
  AssistantMessage,
  ImageContent,
  TextContent,
  ToolResultMessage,
  UserMessage,
} from "@earendil-works/pi-ai";

/** Who decided a tool call's fate, and why. Carried by `tool_decision` events and persisted tool results. */
export interface DecisionRecord {
  decision: "allow" | "deny";
  /** `"<plugin>[:<rule>]"`, or `"harness"` for the core's own decisions. */
  by: string;
  reason: string;
  /** Set when the gate said `ask` and `permissionAsk` answered. */
  askedBy?: string;
  /** Set when the gate said `ask` and no `permissionAsk` tap answered (so the call was denied). */
  unanswered?: true;
  /** Set when the call was parked and a person resolved it later (`tool_approval`): the approval's id. */
  approvalId?: string;
  /**
   * What every tap said, in tap order (`toolCall`, then `toolGate`, then
   * `permissionAsk`): recorded only when the harness option `decisions.trail` is on.
   */
  trail?: DecisionStep[];
}

/** One tap's part in a decision: its answer, or `"no opinion"`. */
export interface DecisionStep {
  hook: "toolCall" | "toolGate" | "permissionAsk";
  /** `"<plugin>[:<rule>]"`: the tap's name, and the rule its verdict named. */
  by: string;
  /**
   * `rewrite`: a `toolCall` tap returned other arguments (in `args`); `error`: the
   * tap threw, timed out, returned a malformed result or was aborted (`reason`
   * says which, and what the failure policy made of it).
   */
  answer: "no opinion" | "allow" | "deny" | "ask" | "rewrite" | "error";
  reason?: string;
  /** The arguments a `toolCall` tap rewrote the call to (answer `rewrite`). */
  args?: unknown;
  /**
   * `false`: the answer did not count. Only explain mode (`rein check`,
   * `evaluateToolCall` with `explainAfterDeny`) writes such steps: the `toolGate`
   * taps after the deciding deny, asked anyway to show what they would have said.
   * A run never asks them, so a recorded trail never has one. Absent: it counted.
   */
  consulted?: false;
}

/** A tool result as Rein persists it: pi-ai's message plus the gate decision that led to it. */
export interface RecordedToolResult extends ToolResultMessage {
  decision?: DecisionRecord;
}

/**
 * A message of the conversation. pi-ai's `Message` also has system messages; Rein keeps
 * the system prompt and the tools in the turn snapshot instead, and hands them to pi-ai
 * as the request's context, so a session never holds one.
 */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** Every message the harness persists and sends to the model. */
export type AgentMessage = Message | RecordedToolResult;

export type { AssistantMessage, ImageContent, TextContent, ToolResultMessage, UserMessage };

/** pi-ai's thinking levels, in order; `xhigh` and `max` only where the model offers them. */
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

interface EntryBase {
  id: string;
  parentId: string | null;
  /** Epoch milliseconds. */
  timestamp: number;
  /**
   * Set on an entry committed from a pending write: the id of its `pending_write`
   * journal record, so recovery can tell a committed write from one still pending.
   */
  pendingId?: string;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
  /**
   * Ids of the queued messages (`queue_push` journal records) this entry consumed:
   * the message itself, taken from a queue, and any queued messages a `beforeRun`
   * tap replaced. Written in the same line as the message, so a crash can never
   * split "injected" from "consumed".
   */
  queueIds?: string[];
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

/** A run's end as the journal records it; `interrupted` is written by recovery. */
export type JournalRunStatus = "completed" | "aborted" | "error" | "blocked" | "interrupted" | "parked";

/** The queues whose accepted messages the journal makes durable. */
export type JournalQueue = "steer" | "followUp" | "nextTurn";

/**
 * What a journal record says (durable runs). Run, turn and tool-call boundaries let
 * recovery close what a crash left open; queue and pending-write records make
 * accepted messages and writes durable before they are committed.
 */
export type JournalRecord =
  /** `stopAfterTools`: the run was started with `RunOptions.stopAfterTools` (absent: false). */
  | { event: "run_start"; runId: string; stopAfterTools?: true }
  | { event: "run_end"; runId: string; status: JournalRunStatus }
  | { event: "turn_start"; runId: string; turnId: string }
  | { event: "turn_end"; runId: string; turnId: string }
  | { event: "tool_start"; runId: string; toolCallId: string; toolName: string }
  | { event: "tool_end"; runId: string; toolCallId: string; toolName: string; isError: boolean }
  /** A message accepted by `steer()` / `followUp()` / `nextTurn()`. */
  | { event: "queue_push"; queue: JournalQueue; queueId: string; message: AgentMessage }
  /** Queued messages removed without being injected (`abort()` clears steer and follow-up). */
  | { event: "queue_clear"; queue: JournalQueue; queueIds: string[] }
  /** Queued messages consumed without a message entry of their own to carry the id. */
  | { event: "queue_take"; queue: JournalQueue; queueIds: string[] }
  /** A session write accepted while busy; committed later as an entry carrying `pendingId`. */
  | { event: "pending_write"; pendingId: string; input: EntryInput }
  /**
   * A call the gate put to a person nobody was there to answer (`onUnanswered: "park"`):
   * the run ended `parked`, the call stays open until a `tool_approval` resolves it.
   * `args` are the final arguments (after `toolCall` rewrites); `argsHash` binds them.
   */
  | {
      event: "tool_park";
      runId: string;
      approvalId: string;
      toolCallId: string;
      toolName: string;
      args: Record<string, unknown>;
      argsHash: string;
      /** The gate verdict that asked. */
      askedBy: string;
      reason: string;
    }
  /** A person's answer to a parked call, written through the approvals API (never by a run). */
  | {
      event: "tool_approval";
      approvalId: string;
      toolCallId: string;
      decision: "allow" | "deny";
      /** Who answered (e.g. `person:alice`). */
      by: string;
      reason: string;
      /** The hash of tool name + arguments the person approved: must equal the park's. */
      argsHash: string;
    };

export type JournalEvent = JournalRecord["event"];

/**
 * A journal line: not a tree node (nothing has it as parent), not in `entries()`,
 * never in model context. `parentId` is the active leaf when it was written.
 */
export type JournalEntry = EntryBase & { type: "journal" } & JournalRecord;

/** Every kind of line a session's storage holds after the header. */
export type StoredEntry = SessionEntry | JournalEntry;

/** Whether `entry` is a node of the tree (not a leaf move, not a journal record). */
export function isTreeEntry(entry: StoredEntry): entry is Exclude<SessionEntry, { type: "leaf" }> {
  return entry.type !== "leaf" && entry.type !== "journal";
}

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
  /** Set on a child agent's session: the parent session, and the tool call that started the child. */
  parent?: SessionParent;
}

/** Where a child session hangs in its session tree (`SessionHeader.parent`). */
export interface SessionParent {
  sessionId: string;
  toolCallId: string;
  /** The agent path decisions in the child carry: `task#1 of run r1`. */
  agentPath: string;
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
