/**
 * What the loop needs from its caller. The loop owns *when* the model is called,
 * how tool calls are validated and executed, and when the next turn starts; the
 * caller owns persistence, plugins and config (spec "Layers").
 */
import type { Model, Models, ToolCall } from "@earendil-works/pi-ai";
import type { HarnessEvent } from "../events/event-types.js";
import type {
  RequestOptions,
  RetryDecision,
  RetryRequest,
  ToolCallView,
  ToolResultPayload,
} from "../hooks/hook-types.js";
import type { AgentMessage, AssistantMessage, DecisionRecord, ThinkingLevel } from "../session/entries.js";
import type { AnyAgentTool, ToolExecutionContext, ToolResult } from "../tools.js";
import type { RetryPolicy } from "./retry.js";

/** Everything one turn runs with: frozen at turn start, used for request, validation and execution. */
export interface LoopTurn {
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  systemPrompt: string;
  messages: AgentMessage[];
  /** The tools the model sees this turn; calls are validated and executed with these definitions. */
  tools: readonly AnyAgentTool[];
  thinkingLevel: ThinkingLevel;
  requestOptions: RequestOptions;
  sessionId?: string;
  cwd?: string;
}

/** What to do with one validated tool call. */
export type ToolCallPlan =
  | {
      action: "execute";
      /** The decided call (final arguments, facts): what the gates saw, what `execute` and result taps get. */
      view: ToolCallView;
      decision?: DecisionRecord;
    }
  | { action: "refuse"; result: ToolResult; decision?: DecisionRecord }
  /**
   * Wait for a person (an `ask` nobody answered, `onUnanswered: "park"`): the call gets
   * no result now; calls after it in the message are not decided; the run ends `parked`.
   */
  | {
      action: "park";
      args: Record<string, unknown>;
      askedBy: string;
      reason: string;
      /** Nobody has decided yet (the person answers later). */
      decision?: undefined;
    };

/**
 * One model request: pi-ai's `Models.streamSimple` (the system prompt and tools ride in
 * the context; pi-ai turns them into its leading system message).
 */
export type StreamFunction = Models["streamSimple"];

export interface LoopHooks {
  /** May transform the request's messages and options (never model or tools). */
  beforeRequest?(
    turn: LoopTurn,
    request: { messages: AgentMessage[]; options: RequestOptions },
  ): Promise<{
    messages: AgentMessage[];
    options: RequestOptions;
  }>;
  /** May replace the raw provider payload. */
  onPayload?(payload: unknown, turn: LoopTurn): Promise<unknown>;
  /** Decides a validated call: rewrite, gate, permission. Default: execute as validated. */
  planToolCall?(
    call: ToolCall,
    tool: AnyAgentTool,
    args: Record<string, unknown>,
    turn: LoopTurn,
  ): Promise<ToolCallPlan>;
  /** Runs a tool; the harness routes this through its plugin choke point. */
  executeTool?(
    tool: AnyAgentTool,
    args: Record<string, unknown>,
    context: ToolExecutionContext,
  ): Promise<ToolResult>;
  /** May rewrite a result before it is recorded. */
  finalizeToolResult?(
    call: ToolCallView,
    result: ToolResultPayload,
    turn: LoopTurn,
  ): Promise<ToolResultPayload>;
  /**
   * May rewrite a tool's progress update before its `tool_execution_update` is
   * emitted (same shape as a result: redaction covers streaming). A failure
   * withholds that update and fails the run, as for a result.
   */
  finalizeToolUpdate?(
    call: ToolCallView,
    partial: ToolResultPayload,
    turn: LoopTurn,
  ): Promise<ToolResultPayload>;
  /**
   * Asked before a failed request is retried (the retry policy would retry it):
   * `retry` (optionally with another delay), `stop` (the turn ends with the
   * provider error), or `undefined` to retry as planned.
   */
  beforeRetry?(request: RetryRequest, turn: LoopTurn): Promise<RetryDecision | undefined>;
  /** Steering messages to inject after the current turn ends. */
  takeSteering?(): AgentMessage[];
  /** Follow-up messages to inject when the run would otherwise stop. */
  takeFollowUp?(): AgentMessage[];
  /** One more turn (with these messages) instead of stopping, or `undefined` to stop. */
  beforeStop?(last: AssistantMessage, continuations: number): Promise<AgentMessage[] | undefined>;
  /**
   * Called after a turn ended (closed, `turn_end` emitted) in a provider error
   * that was not retried. Return true to start a fresh turn that repeats the
   * request (its snapshot is prepared anew), e.g. after compacting an
   * overflowing context; false ends the run with the error.
   */
  recoverTurn?(message: AssistantMessage, turn: LoopTurn): Promise<boolean>;
}

/** The loop's config once its defaults are applied (the stream function is always set). */
export type LoopConfig = AgentLoopConfig & { streamFn: StreamFunction };

export interface AgentLoopConfig extends LoopHooks {
  runId?: string;
  /** Ends the run: the provider stream, waiting taps, deciding further tool calls. */
  signal?: AbortSignal;
  /**
   * What running tools get, and what keeps an allowed call from starting.
   * Default: `signal`. The harness passes one only a person's `abort()` aborts,
   * so a plugin's `stopRun` (which aborts `signal`) ends the run without
   * cancelling a call a gate already allowed.
   */
  executionSignal?: AbortSignal;
  /** How each request is made. Default: pi-ai's built-in providers (see AgentHarnessOptions.models). */
  streamFn?: StreamFunction;
  /**
   * Transient provider errors (rate limit, overload, network) are retried within
   * the turn, with backoff, under this policy (read at each failure, so a function
   * sees live settings). Absent: no retry.
   */
  retry?: RetryPolicy | (() => RetryPolicy | undefined);
  /** Awaited for every event, in order. */
  emit?(event: HarnessEvent): Promise<void> | void;
  /**
   * Called at the start of every turn. Without it the loop runs standalone over
   * `context`, keeping the transcript in memory.
   */
  prepareTurn?(): Promise<LoopTurn> | LoopTurn;
  context?: LoopTurn;
  /**
   * Resume a parked run: the first turn makes no request but answers this persisted
   * assistant message's tool calls named in `openCallIds` (the others have results).
   */
  resume?: { message: AssistantMessage; openCallIds: readonly string[] };
  /**
   * A turn whose tool calls were all answered does not lead to another request:
   * the run goes on as if the model had stopped (steering, follow-ups and
   * `beforeStop` still apply). See `RunOptions.stopAfterTools`.
   */
  stopAfterTools?: boolean;
}

export interface LoopResult {
  runId: string;
  status: "completed" | "aborted" | "error" | "parked";
  /** Every message the run produced, prompts first, in order. */
  messages: AgentMessage[];
  /** For `error`: what failed (a provider error message or a thrown error). */
  error?: unknown;
}
