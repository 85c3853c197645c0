/**
 * Payloads, contexts and results of every decision hook. The hook table
 * (hook-table.ts) pairs each hook with these shapes; SDK types derive from there.
 */
import type { Model, UserMessage } from "@earendil-works/pi-ai";
import type {
  AgentMessage,
  AssistantMessage,
  EntryInput,
  SessionContext,
  SessionEntry,
  ThinkingLevel,
} from "../session/entries.js";
import type { AnyAgentTool, ToolCallFacts, ToolResult, ToolRisk } from "../tools.js";

/** Provider request options a `beforeRequest` tap may change. Never the model or tools. */
export interface RequestOptions {
  headers?: Record<string, string>;
  metadata?: Record<string, unknown>;
  maxTokens?: number;
  temperature?: number;
  [option: string]: unknown;
}

/** Read-only view of the live config, as hooks and plugins see it. */
export interface ConfigView {
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  readonly model: Model<any>;
  readonly thinkingLevel: ThinkingLevel;
  readonly tools: readonly AnyAgentTool[];
  readonly activeToolNames: readonly string[];
  readonly resources: Readonly<Record<string, unknown>>;
  readonly requestOptions: Readonly<RequestOptions>;
  readonly cwd: string;
  readonly sessionId: string;
  /** What an unanswered `ask` becomes: a permission plugin with nobody to ask may leave it to `park`. */
  readonly onUnanswered: "deny" | "park";
}

/** Queue operations, safe to call from taps and listeners. */
export interface QueueControl {
  steer(message: string | AgentMessage): void;
  followUp(message: string | AgentMessage): void;
  nextTurn(message: string | AgentMessage): void;
}

/** Entry types a caller or plugin may write through the harness (the rest are the harness's own). */
export type WritableEntry = Extract<
  EntryInput,
  { type: "custom" | "custom_message" | "label" | "session_info" }
>;

/** The session as plugins see it: reads, and writes that obey the pending-write rule. */
export interface SessionFacade {
  readonly id: string;
  readonly leafId: string | null;
  entries(): readonly SessionEntry[];
  getEntry(id: string): SessionEntry | undefined;
  buildContext(): SessionContext;
  /** Written at once when idle; queued as a pending write until the next save point when busy. */
  append(input: WritableEntry): void;
}

/**
 * Who a child agent is (a harness started by `startChild`, e.g. through the `task`
 * tool), as its taps see it in `context.agent`. Absent in a top-level agent.
 */
export interface AgentInfo {
  /** `task#1 of run r1`: appended to every decision in the child (`by: "policy:x in task#1 of run r1"`). */
  readonly path: string;
  readonly parentSessionId: string;
  /** The parent's tool call that started this child. */
  readonly parentToolCallId: string;
  /**
   * Whether the parent's session grants answer this child's asks (the parent's config
   * says so, never the child's). A child's own grants never reach the parent.
   */
  readonly inheritGrants: boolean;
}

export interface HookContext {
  readonly config: ConfigView;
  /** Set in a child agent: who it is and where it hangs (see `AgentInfo`). */
  readonly agent?: AgentInfo;
  readonly signal: AbortSignal;
  readonly runId: string | undefined;
  readonly turnId: string | undefined;
  readonly queues: QueueControl;
  readonly session: SessionFacade;
  /**
   * Ends the current run (e.g. a budget is exhausted): the provider stream and
   * waiting taps are asked to stop as with `abort()`, no further request is
   * made, the response's tool calls not yet decided are refused (`by:
   * "harness:stopped"`, this reason), and the run ends with status `aborted`
   * and this reason. Unlike a person's `abort()`, a call a gate already allowed
   * is not cancelled (it runs to its end, result taps included), and queued
   * steering and follow-ups are kept. Does nothing outside a run or once the
   * run is ending.
   */
  stopRun(reason: string): void;
}

export interface ToolCallInfo {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly risk: ToolRisk | undefined;
  /** What the tool's `inspect` resolved; absent before `toolCall` taps have run. */
  readonly facts?: Readonly<ToolCallFacts>;
  readonly tool: AnyAgentTool;
}

export interface ToolHookContext extends HookContext {
  readonly call: ToolCallInfo;
}

// ---- payloads and results, per hook ----

export interface BeforeRunPayload {
  systemPrompt: string;
  /** The messages this run starts with: queued next-turn messages, then the prompt. */
  messages: AgentMessage[];
  /** Set to stop the run before it starts; later taps are skipped. */
  block?: { reason: string };
}

export interface RequestPayload {
  messages: AgentMessage[];
  options: RequestOptions;
}

export interface ToolCallPayload {
  readonly id: string;
  readonly name: string;
  args: Record<string, unknown>;
}

export interface ToolGateCall {
  readonly id: string;
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly risk: ToolRisk | undefined;
  /** What the tool's `inspect` resolved from `args` (canonical paths, parsed command). */
  readonly facts: Readonly<ToolCallFacts>;
}

export type GateDecision = "allow" | "ask" | "deny";

export interface GateVerdict {
  decision: GateDecision;
  reason: string;
  /** A rule id inside the plugin; recorded as `by: "<plugin>:<rule>"`. */
  rule?: string;
}

/** A verdict with its author, as the harness records it. */
export interface AttributedVerdict extends GateVerdict {
  by: string;
}

export interface PermissionRequest {
  readonly call: ToolGateCall;
  /** The `ask` verdict that led here. */
  readonly verdict: AttributedVerdict;
}

export interface PermissionAnswer {
  decision: "allow" | "deny";
  reason?: string;
}

export interface ToolResultPayload extends ToolResult {
  isError: boolean;
}

export interface StopRequest {
  readonly lastMessage: AssistantMessage;
  /** How many times `beforeStop` already asked for one more turn in this run. */
  readonly continuations: number;
}

/** Asked before a failed provider request is retried (the retry policy would retry it). */
export interface RetryRequest {
  /** The attempt the retry would be (2 = the first retry). */
  readonly attempt: number;
  readonly maxAttempts: number;
  /** The backoff the policy chose, in ms. */
  readonly delayMs: number;
  /** The failed attempt's closed assistant message. */
  readonly message: AssistantMessage;
  readonly errorMessage: string;
}

/** Retry (optionally after another delay), or give up: the turn ends with the provider error. */
export type RetryDecision = { decision: "retry"; delayMs?: number } | { decision: "stop"; reason?: string };

export type StopDecision =
  | { decision: "stop"; reason?: string }
  | { decision: "continue"; message: string | UserMessage; reason?: string };

export type CompactionTrigger = "manual" | "threshold" | "overflow";

export interface CompactRequest {
  /** Why: `manual` (`harness.compact()`), `threshold` (the next request would not fit), `overflow` (the provider refused it). */
  readonly trigger: CompactionTrigger;
  /** Estimated tokens of the context before compaction. */
  readonly tokensBefore: number;
  /** The messages the summary replaces, oldest first (always set by the harness). */
  readonly messages?: readonly AgentMessage[];
  /** The summary of the previous compaction, which the new summary must carry forward. */
  readonly previousSummary?: string;
  /** The first entry kept verbatim after the summary (always set by the harness). */
  readonly firstKeptEntryId?: string;
}

export interface BranchRequest {
  readonly fromId: string | null;
  readonly targetId: string | null;
  /** Whether a `branch_summary` of the abandoned branch will be recorded (caller asked for one). */
  readonly summarize: boolean;
  /** The abandoned branch's messages, oldest first (always set by the harness). */
  readonly messages?: readonly AgentMessage[];
}

/** Cancel the operation, or supply its summary instead of asking the model. */
export type SummaryDecision = { cancel: { reason: string } } | { summary: string };
