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
  | "defaultToolVerdict";

/** One streaming step of an assistant message (pi-ai's event, without the repeated partial). */
export interface StreamDelta {
  type: string;
  contentIndex?: number;
  delta?: string;
}

export type QueueName = "steer" | "followUp" | "nextTurn";

export type RunStatus = "completed" | "aborted" | "error" | "blocked";

export interface RunOutcome {
  runId: string;
  status: RunStatus;
  /** For `blocked` and `error`: why. */
  reason?: string;
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
  queue_update: {
    queue: QueueName;
    steer: AgentMessage[];
    followUp: AgentMessage[];
    nextTurn: AgentMessage[];
  };
  config_change: { key: ConfigKey; pending: boolean };
  save_point: { hadPendingWrites: boolean; flushed: number };
  compaction_start: { reason: "manual" | "threshold" | "overflow" };
  compaction_end: {
    reason: "manual" | "threshold" | "overflow";
    status: "done" | "cancelled" | "failed";
    detail?: string;
  };
  branch_start: { targetId: string | null };
  branch_end: { targetId: string | null; status: "done" | "cancelled" | "failed"; detail?: string };
  abort: { runId?: string; reason?: string };
  plugin_error: { plugin: string; hook: string; message: string; code: string; toolCallId?: string };
  settled: { runId?: string };
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
  queue_update: true,
  config_change: true,
  save_point: true,
  compaction_start: true,
  compaction_end: true,
  branch_start: true,
  branch_end: true,
  abort: true,
  plugin_error: true,
  settled: true,
};
export const EVENT_TYPES = Object.keys(EVENT_TYPE_TABLE) as EventType[];
