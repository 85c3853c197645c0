/**
 * The observation surface: facts that already happened. Every event is a plain
 * serialisable object with `type` (the CLI's `--json` prints them one per line).
 * Listeners can never change a decision; that is what hooks are for.
 */
import type {
  AgentMessage,
  AssistantMessage,
  DecisionRecord,
  RecordedToolResult,
} from "../session/entries.js";
import type { ToolResult } from "../tools.js";

export type ConfigKey =
  | "model"
  | "thinkingLevel"
  | "tools"
  | "activeTools"
  | "resources"
  | "systemPrompt"
  | "requestOptions"
  | "queueModes"
  | "defaultToolVerdict"
  | "compaction"
  | "retry"
  | "onUnanswered"
  | "decisions";

/** One streaming step of an assistant message (pi-ai's event, without the repeated partial). */
export interface StreamDelta {
  type: string;
  contentIndex?: number;
  delta?: string;
}

export type CompactionReason = "manual" | "threshold" | "overflow";

export type QueueName = "steer" | "followUp" | "nextTurn";

export type RunStatus = "completed" | "aborted" | "error" | "blocked" | "parked";

/** A tool call waiting for a person: the run ended `parked` on it (see `tool_parked`). */
export interface ParkedCall {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  /** The final arguments (after `toolCall` rewrites): what runs if approved. */
  args: Record<string, unknown>;
  /** sha256 of tool name + canonical (RFC 8785) arguments: an approval binds it. */
  argsHash: string;
  /** The gate verdict that asked, and why. */
  askedBy: string;
  reason: string;
}

export interface RunOutcome {
  runId: string;
  status: RunStatus;
  /** For `blocked` and `error`: why. */
  reason?: string;
  /** For `parked`: the calls waiting for a person, in call order. */
  parked?: ParkedCall[];
  /** Messages this run appended, in order. */
  messages: AgentMessage[];
}

export interface EventPayloads {
  agent_start: { runId: string };
  agent_end: { runId: string; status: RunStatus; messages: AgentMessage[] };
  turn_start: { runId: string; turnId: string; turnIndex: number };
  turn_end: { runId: string; turnId: string; message: AssistantMessage; toolResults: RecordedToolResult[] };
  message_start: { message: AgentMessage };
  /** `message` is the partial assistant message so far; `delta` what this update added. */
  message_update: { message: AssistantMessage; delta: StreamDelta };
  message_end: { message: AgentMessage };
  tool_execution_start: { toolCallId: string; toolName: string; args: unknown };
  tool_execution_update: { toolCallId: string; toolName: string; partial: ToolResult };
  tool_execution_end: { toolCallId: string; toolName: string; result: ToolResult; isError: boolean };
  tool_decision: DecisionRecord & { toolCallId: string; toolName: string; args: unknown };
  /** An `ask` nobody answered was parked (`onUnanswered: "park"`): the run will end `parked`. */
  tool_parked: ParkedCall;
  queue_update: {
    queue: QueueName;
    steer: AgentMessage[];
    followUp: AgentMessage[];
    nextTurn: AgentMessage[];
  };
  config_change: { key: ConfigKey; pending: boolean };
  save_point: { hadPendingWrites: boolean; flushed: number };
  /** A compaction begins (manual, or automatic inside a run: `runId` set). */
  compaction_start: { reason: CompactionReason; tokensBefore: number; runId?: string };
  /**
   * `done`: a `compaction` entry (`entryId`) was appended; `cancelled`: a `beforeCompact` tap
   * cancelled (`detail` is the reason and `by` the tap); `skipped`: nothing to compact;
   * `failed` / `aborted`: nothing was written.
   */
  compaction_end: {
    reason: CompactionReason;
    status: "done" | "cancelled" | "skipped" | "failed" | "aborted";
    detail?: string;
    runId?: string;
    entryId?: string;
    firstKeptEntryId?: string;
    tokensBefore?: number;
    /** Estimated context after the compaction. */
    tokensAfter?: number;
    /** Who wrote the summary: `model` or the `beforeCompact` tap that supplied it (or cancelled). */
    by?: string;
  };
  branch_start: { targetId: string | null; fromId?: string | null };
  /** `summaryEntryId`: the `branch_summary` entry recorded for the abandoned branch, if any. */
  branch_end: {
    targetId: string | null;
    status: "done" | "cancelled" | "failed" | "aborted";
    detail?: string;
    summaryEntryId?: string;
    by?: string;
  };
  /**
   * A transient provider error (rate limit, overload, network) will be retried after
   * `delayMs`: `attempt` is the attempt about to be made (2 = the first retry), of `maxAttempts`.
   * `operation`: a run's model request, or the model call writing a summary.
   */
  retry: {
    runId?: string;
    operation: "request" | "summary";
    attempt: number;
    maxAttempts: number;
    delayMs: number;
    errorMessage: string;
  };
  abort: { runId?: string; reason?: string };
  plugin_error: { plugin: string; hook: string; message: string; code: string; toolCallId?: string };
  settled: { runId?: string };
  /**
   * Something happened in a child agent (`startChild`, the `task` tool): its event,
   * as the child emitted it, with who the child is. Stream deltas are not forwarded.
   */
  child_event: { agent: ChildEventAgent; event: HarnessEvent };
}

/** Which child agent a `child_event` comes from. */
export interface ChildEventAgent {
  /** `task#1 of run r1`: the path of agents, as decisions in the child name it. */
  path: string;
  sessionId: string;
  /** The parent's tool call that started the child. */
  toolCallId: string;
}

export type EventType = keyof EventPayloads;

export type HarnessEvent = { [K in EventType]: { type: K } & EventPayloads[K] }[EventType];
export type EventOf<K extends EventType> = Extract<HarnessEvent, { type: K }>;

export type EventListener<E = HarnessEvent> = (event: E) => void | Promise<void>;

export interface ListenerOptions {
  /** Who listens (a plugin name); named in `plugin_error` when the listener throws. */
  owner?: string;
}

/** Every event type, as a runtime list (kept in step with `EventPayloads` by the `Record`). */
const EVENT_TYPE_TABLE: Record<EventType, true> = {
  agent_start: true,
  agent_end: true,
  turn_start: true,
  turn_end: true,
  message_start: true,
  message_update: true,
  message_end: true,
  tool_execution_start: true,
  tool_execution_update: true,
  tool_execution_end: true,
  tool_decision: true,
  tool_parked: true,
  queue_update: true,
  config_change: true,
  save_point: true,
  compaction_start: true,
  compaction_end: true,
  branch_start: true,
  branch_end: true,
  retry: true,
  abort: true,
  plugin_error: true,
  settled: true,
  child_event: true,
};
export const EVENT_TYPES = Object.keys(EVENT_TYPE_TABLE) as EventType[];
