/**
 * @rein/sdk: what a plugin or tool-pack author imports. A plugin depends on this
 * package alone: the authoring functions, the plugin host, `Type`, and every type
 * a hook, listener or tool touches are re-exported here. See README.md.
 * Every export is named (no `export *`); test/entry-points.test.ts pins the
 * runtime values of this entry and of `@rein/sdk/testing`.
 */

export type {
  AgentHarness,
  AgentInfo,
  AgentMessage,
  AgentTool,
  AnyAgentTool,
  AssistantMessage,
  AttributedVerdict,
  BeforeRunPayload,
  BranchRequest,
  ChildAgentOptions,
  ChildEventAgent,
  CompactionTrigger,
  CompactRequest,
  ConfigKey,
  ConfigView,
  DecisionRecord,
  DecisionStep,
  DefaultToolVerdict,
  Disposer,
  EntryInput,
  EventListener,
  EventOf,
  EventPayloads,
  EventType,
  GateDecision,
  GateVerdict,
  HarnessEvent,
  HarnessHook,
  HarnessHooks,
  HookContext,
  HookContextOf,
  HookName,
  HookPayload,
  HookResult,
  ImageContent,
  PermissionAnswer,
  PermissionRequest,
  QueueControl,
  RecordedToolResult,
  ReinTapOptions,
  RequestOptions,
  RequestPayload,
  RetryDecision,
  RetryRequest,
  RunOutcome,
  SessionContext,
  SessionEntry,
  SessionFacade,
  SessionParent,
  SkillResource,
  StopDecision,
  StopRequest,
  SummaryDecision,
  TemplateResource,
  TextContent,
  ThinkingLevel,
  ToolCallFacts,
  ToolCallInfo,
  ToolCallPayload,
  ToolExecutionContext,
  ToolGateCall,
  ToolHookContext,
  ToolInspectionContext,
  ToolResult,
  ToolResultPayload,
  ToolRisk,
  WritableEntry,
} from "@rein/harness";
export {
  HarnessError,
  isHarnessError,
  Stage,
  TOOL_NAME_PATTERN,
  TOOL_RISKS,
  textResult,
} from "@rein/harness";
export { type Static, type TSchema, Type } from "typebox";
export type { TapRecord } from "./attributed-hooks.js";
export { argsHash, canonicalJson } from "./call-identity.js";
export {
  type ChildConfig,
  childConfigs,
  recoverChildren,
  type StartChildOptions,
  startChild,
} from "./child-agents.js";
export { allowedEdits, closestName, closestNames, editDistance } from "./closest-name.js";
export {
  type CustomModelConfig,
  defineConfig,
  type OptionsInput,
  type PluginEntry,
  type PluginOptionsInput,
  plugin,
  type ReinConfig,
} from "./config.js";
export {
  CONFIG_KEYS,
  CONFIG_TABLE,
  type ConfigKeyName,
  type ConfigKeySpec,
  CUSTOM_MODEL_APIS,
  type MergeRule,
} from "./config-table.js";
export {
  cleanupFailures,
  duplicatePlugin,
  duplicateTool,
  invalidOptions,
  invalidPlugin,
  invalidTool,
  isSdkError,
  pluginCleanupFailed,
  pluginDisposed,
  pluginSetupFailed,
  SdkError,
  SdkErrorCode,
  type SdkErrorFields,
  unsupported,
} from "./errors.js";
export {
  type EvaluateToolCallOptions,
  evaluateToolCall,
  type HarnessLike,
  type ToolCallEvaluation,
  type ToolCallProbe,
} from "./evaluate-tool-call.js";
export { type LogLevel, type LogRecord, type LogSink, type PluginLogger, stderrSink } from "./logger.js";
export {
  type WalkEntry,
  type WalkExclusion,
  type WalkExclusions,
  walkExclusions,
} from "./paths/exclusions.js";
export {
  inspectPaths,
  type PathArgs,
  type PathInspection,
  type PathKind,
  pathFact,
  type ResolvedPathFacts,
} from "./paths/facts.js";
export { type ProtectedFiles, protectedFiles } from "./paths/protected.js";
export {
  CONFIG_FILE_NAMES,
  GIT_CODE_ENTRIES,
  GIT_POINTER_FILES,
  GIT_WRITABLE_ENTRIES,
  REIN_STATE_NAMES,
  reinCacheDir,
  reinConfigDir,
} from "./paths/rein-state.js";
export {
  isInside,
  lexicalRelative,
  MAX_NAME_BYTES,
  MAX_PATH_BYTES,
  type PathRoot,
  pathRoot,
  type ResolvedPath,
  realpathLoose,
  resolvePath,
} from "./paths/resolve.js";
export { type StateFolders, stateFolders } from "./paths/state-folders.js";
export {
  type AnyReinPlugin,
  type Cleanup,
  definePlugin,
  isReinPlugin,
  type PluginDefinition,
  type PluginOptions,
  type Rein,
  type ReinPlugin,
  type SetupResult,
} from "./plugin.js";
export {
  type LoadedPlugin,
  type LoadPluginsOptions,
  loadPlugins,
  type PluginHost,
  type PluginHostEntry,
} from "./plugin-host.js";
export { resolvePluginOptions } from "./plugin-options.js";
export {
  createScriptedModel,
  type RecordedRequest,
  type ScriptedModel,
  type ScriptedModelOptions,
  type ScriptReply,
  type ScriptRequest,
  type ScriptStep,
  type ScriptToolCall,
  toAssistantMessage,
} from "./scripted-model.js";
export type { ShellCommandFacts, ShellRedirection, ShellUnknown, SimpleCommandFacts } from "./shell/facts.js";
export {
  checkSkillFile,
  type DiscoverOptions,
  discoverSkills,
  type ShadowedSkill,
  SKILL_FILE,
  type SkillDiscovery,
  type SkillFields,
  type SkillFileResult,
  type SkillSource,
} from "./skills/index.js";
export { type TextMask, type TextMasks, textMasks } from "./text-masks.js";
export { defineTool, isAgentToolLike, type ToolDefinition } from "./tool.js";
export {
  isTraceparent,
  type ObservedDecision,
  type TraceContext,
  type TraceparentSource,
  traceContext,
} from "./trace-context.js";
export { type TruncatedOutput, type TruncateOptions, truncateOutput } from "./truncate-output.js";
