/**
 * @rein/harness public API. See README.md and ../../../shared/spec/harness.md.
 */

export { type Static, type TSchema, Type } from "@mariozechner/pi-ai";
export {
  type CompactionSettings,
  compactionThreshold,
  DEFAULT_COMPACTION_SETTINGS,
} from "./compaction/compaction-settings.js";
export { type BranchInContext, branchInContext, findCutPoint, isCutPoint } from "./compaction/cut-point.js";
export {
  filesTouched,
  SUMMARY_SECTIONS,
  SUMMARY_SYSTEM_PROMPT,
  serializeMessage,
  summaryPrompt,
} from "./compaction/summarize.js";
export {
  type ContextEstimateOptions,
  estimateContextTokens,
  estimateFixedTokens,
  estimateMessageTokens,
  estimateTextTokens,
} from "./compaction/token-estimate.js";
export * from "./errors.js";
export { EventBus } from "./events/event-bus.js";
export * from "./events/event-types.js";
export {
  AgentHarness,
  type AgentHarnessOptions,
  type CompactOptions,
  type Durability,
  type Phase,
  type WritableEntry,
} from "./harness/agent-harness.js";
export type { CompactionDetails, CompactionOutcome } from "./harness/compaction-run.js";
export {
  type DefaultToolVerdict,
  type SystemPromptInput,
  type SystemPromptSource,
  THINKING_LEVELS,
} from "./harness/live-config.js";
export {
  type QueueContents,
  type QueueMode,
  type QueueModes,
  toUserMessage,
} from "./harness/message-queues.js";
export type { PromptInput } from "./harness/prompt-input.js";
export {
  INTERRUPTED_NOT_RUN,
  INTERRUPTED_UNKNOWN,
  INTERRUPTED_UNRECORDED,
  RETRY_NOTE,
  type RecoveredToolCall,
  type RecoveryReport,
} from "./harness/recovery.js";
export { HARNESS_DECIDER, resolveDefaultVerdict } from "./harness/tool-decisions.js";
export type { NavigateOptions, NavigateOutcome } from "./harness/tree-navigation.js";
export type { TurnSnapshot } from "./harness/turn-snapshot.js";
export {
  type Attributed,
  createHooks,
  DEFAULT_FAILURE_POLICY,
  type FailurePolicy,
  type HookEnvironment,
  removeTaps,
  runBail,
  runToolGate,
  runWaterfall,
} from "./hooks/create-hooks.js";
export * from "./hooks/hook-table.js";
export * from "./hooks/hook-types.js";
export { type InFlightCall, type PluginCallSite, PluginDriver } from "./hooks/plugin-driver.js";
export { shortId } from "./ids.js";
export { runAgentLoop } from "./loop/agent-loop.js";
export * from "./loop/loop-types.js";
export {
  DEFAULT_RETRY_SETTINGS,
  isTransientError,
  type RetryPolicy,
  type RetrySettings,
  retryDelay,
} from "./loop/retry.js";
export * from "./session/index.js";
export * from "./tools.js";
