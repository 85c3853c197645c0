/**
 * @rein/harness public API. See README.md and ../../../shared/spec/harness.md.
 *
 * Every export is named here on purpose (no `export *`); test/entry-points.test.ts
 * pins the runtime values, so an addition to the API is a deliberate change.
 * Internals (hook runners, the plugin driver, compaction helpers, error factories)
 * are not exported: @rein/sdk uses `decideToolCall` and the harness's own methods.
 */

export type { ImageContent, TextContent } from "@earendil-works/pi-ai";
export { type Static, type TSchema, Type } from "typebox";
export { agentOf, recoverChildren, type StartChildOptions, startChild } from "./children/child-agents.js";
export { childSessionFiles } from "./children/child-sessions.js";
export type { ChildAgentOptions } from "./children/start-child.js";
export type { CompactionSettings } from "./compaction/compaction-settings.js";
export { maskConnectionStrings } from "./connection-strings.js";
export {
  describeError,
  HarnessError,
  HarnessErrorCode,
  type HarnessErrorFields,
  isHarnessError,
} from "./errors.js";
export type {
  ChildEventAgent,
  CompactionReason,
  ConfigKey,
  EventListener,
  EventOf,
  EventPayloads,
  EventType,
  HarnessEvent,
  ListenerOptions,
  ParkedCall,
  QueueName,
  RunOutcome,
  RunStatus,
  StreamDelta,
} from "./events/event-types.js";
export {
  AgentHarness,
  type AgentHarnessOptions,
  type CompactOptions,
  type DecisionOptions,
  type Durability,
  type Phase,
} from "./harness/agent-harness.js";
export type { CompactionDetails, CompactionOutcome } from "./harness/compaction-run.js";
export type { DefaultToolVerdict, SystemPromptInput, SystemPromptSource } from "./harness/live-config.js";
export type { QueueContents, QueueMode, QueueModes } from "./harness/message-queues.js";
export type { PromptInput, RunOptions } from "./harness/prompt-input.js";
export type { RecoveredToolCall, RecoveryReport } from "./harness/recovery.js";
export {
  type DecideOptions,
  type DecisionEnvironment,
  decideToolCall,
  type ToolDecision,
} from "./harness/tool-decisions.js";
export type { NavigateOptions, NavigateOutcome } from "./harness/tree-navigation.js";
export type { TurnSnapshot } from "./harness/turn-snapshot.js";
export type { Attributed, FailurePolicy } from "./hooks/create-hooks.js";
export {
  type Disposer,
  type HarnessHook,
  type HarnessHooks,
  type HarnessTapOptions,
  HOOK_NAMES,
  type HookContextOf,
  type HookName,
  type HookPayload,
  type HookResult,
  type OwnedTap,
  type ReinTapOptions,
  Stage,
  type TapOwner,
} from "./hooks/hook-table.js";
export type {
  AgentInfo,
  AttributedVerdict,
  BeforeRunPayload,
  BranchRequest,
  CompactionTrigger,
  CompactRequest,
  ConfigView,
  GateDecision,
  GateVerdict,
  HookContext,
  PermissionAnswer,
  PermissionRequest,
  QueueControl,
  RequestOptions,
  RequestPayload,
  RetryDecision,
  RetryRequest,
  SessionFacade,
  StopDecision,
  StopRequest,
  SummaryDecision,
  ToolCallInfo,
  ToolCallPayload,
  ToolCallView,
  ToolGateCall,
  ToolHookContext,
  ToolResultPayload,
  WritableEntry,
} from "./hooks/hook-types.js";
export type { InFlightCall, PluginCallSite } from "./hooks/plugin-driver.js";
export { runAgentLoop } from "./loop/agent-loop.js";
export type {
  AgentLoopConfig,
  LoopHooks,
  LoopResult,
  LoopTurn,
  StreamFunction,
  ToolCallPlan,
} from "./loop/loop-types.js";
export type { RetrySettings } from "./loop/retry.js";
export { loadBuiltinProvider } from "./models/builtin-models.js";
export { reinIdentity, reinIdentityForApi, withReinIdentity } from "./models/rein-identity.js";
export {
  allowedToolNames,
  createSkillTool,
  DEFAULT_CATALOG_BUDGET,
  expandArguments,
  type InvocationArgs,
  parseAllowedTools,
  SKILL_ENTRY,
  SKILL_NAME_PATTERN,
  SKILL_TOOL_NAME,
  type SkillHost,
  type SkillInvocationRecord,
  type SkillResource,
  type SkillVia,
  skillCatalog,
  splitArguments,
  TEMPLATE_ENTRY,
  TEMPLATE_NAME_PATTERN,
  type TemplateResource,
} from "./resources/index.js";
export {
  type Approval,
  type ApprovalAnswer,
  type ApprovalStatus,
  approvalsOf,
  callHash,
  resolveApproval,
} from "./session/approvals.js";
export {
  type ActiveToolsChangeEntry,
  type AgentMessage,
  type AppliedCompaction,
  type AssistantMessage,
  type BranchSummaryEntry,
  type CompactionEntry,
  type CreateSessionOptions,
  type CustomEntry,
  type CustomMessageEntry,
  createSessionHeader,
  type DecisionRecord,
  type DecisionStep,
  type EntryInput,
  forkEntries,
  type JournalEntry,
  type JournalEvent,
  type JournalQueue,
  type JournalRecord,
  type JournalRunStatus,
  type JsonlOpenOptions,
  JsonlStorage,
  type LabelEntry,
  type LeafEntry,
  type LoadedSession,
  MemoryStorage,
  type MessageEntry,
  type ModelChangeEntry,
  type RecordedToolResult,
  SESSION_FORMAT_VERSION,
  Session,
  type SessionContext,
  type SessionEntry,
  type SessionEntryType,
  type SessionHeader,
  type SessionInfoEntry,
  type SessionParent,
  type SessionStorage,
  SessionStore,
  type SessionSummary,
  type StorageResult,
  type StoredEntry,
  THINKING_LEVELS,
  type ThinkingLevel,
  type ThinkingLevelChangeEntry,
} from "./session/index.js";
export {
  type AgentTool,
  type AnyAgentTool,
  TOOL_NAME_PATTERN,
  TOOL_RISKS,
  type ToolCallFacts,
  type ToolExecutionContext,
  type ToolInspectionContext,
  type ToolResult,
  type ToolRisk,
  textResult,
} from "./tools.js";
