/**
 * The harness's own read-only views, as plugins and offline evaluation see them:
 * the config view, the session facade and hook contexts (the same objects the
 * harness hands its taps, so nothing here can write around the harness).
 */
import type {
  AgentHarness,
  ConfigView,
  HookContext,
  SessionFacade,
  ToolCallInfo,
  ToolHookContext,
} from "@rein/harness";

/** The live config, read-only. */
export const configView = (harness: AgentHarness): ConfigView => harness.configView;

/** The session as plugins see it: reads, and writes that obey the pending-write rule. */
export const sessionFacade = (harness: AgentHarness): SessionFacade => harness.sessionFacade;

/** A hook context outside any turn, e.g. to evaluate a tool call offline. */
export const hookContext = (harness: AgentHarness, signal: AbortSignal): HookContext =>
  harness.hookContext(signal);

export const toolHookContext = (
  harness: AgentHarness,
  signal: AbortSignal,
  call: ToolCallInfo,
): ToolHookContext => harness.toolHookContext(signal, call);
