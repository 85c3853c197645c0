/**
 * Tool definitions. A tool is an immutable value: the harness replaces tools through
 * setters and never edits one in place, so a turn snapshot's shallow copy stays true
 * for the whole turn (spec: "Turn snapshot").
 */
import type { ImageContent, TextContent } from "@earendil-works/pi-ai";
import type { Static, TSchema } from "typebox";
import { describeError, HarnessError, pluginFailure } from "./errors.js";
import type { ToolCallView } from "./hooks/hook-types.js";
import type { PluginDriver } from "./hooks/plugin-driver.js";

/** What a tool may be called: 1-64 of A-Z a-z 0-9 _ - (what providers accept). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export type ToolRisk = "read" | "write" | "exec" | "network";
export const TOOL_RISKS: readonly ToolRisk[] = ["read", "write", "exec", "network"];

export interface ToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError?: boolean;
}

/**
 * What a tool's `inspect` found out about one call's arguments: canonical paths, a
 * parsed command, and the like. Computed once, after `toolCall` rewrites and
 * validation, and handed both to the gates (`ToolGateCall.facts`) and to `execute`
 * (`ToolExecutionContext.facts`), so the verdict and the execution rest on the same
 * resolution (security invariants 1 and 2). Empty here on purpose: packages add
 * their fields by declaration merging (`declare module "@rein/harness"`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging.
export interface ToolCallFacts {}

/** Where a call is inspected: the turn's working directory and session. */
export interface ToolInspectionContext {
  cwd: string;
  sessionId: string;
}

export interface ToolExecutionContext {
  /** Aborted when the run is aborted; a tool should stop as soon as it can. */
  signal: AbortSignal;
  /** Reports progress; becomes a `tool_execution_update` event. */
  update(partial: ToolResult): void;
  cwd: string;
  sessionId: string;
  toolCallId: string;
  /** The facts the gates decided on (frozen); `{}` when the tool has no `inspect`. */
  facts: Readonly<ToolCallFacts>;
}

export interface AgentTool<TParams extends TSchema = TSchema, TDetails = unknown> {
  name: string;
  label?: string;
  description: string;
  parameters: TParams;
  risk?: ToolRisk;
  /** `sequential` tools run alone: earlier calls finish first, later calls wait. Default `parallel`. */
  executionMode?: "parallel" | "sequential";
  /** Safe to run again after an interruption (recovery says so in the synthesized result). */
  idempotent?: boolean;
  /** The plugin that registered the tool, for error attribution. */
  owner?: string;
  /**
   * Resolves what the gates must decide on (paths, commands) from validated
   * arguments. Runs once per call, before `toolGate`; a throw denies the call
   * (fail closed). Must not have side effects.
   */
  inspect?(args: Static<TParams>, context: ToolInspectionContext): ToolCallFacts | Promise<ToolCallFacts>;
  execute(
    args: Static<TParams>,
    context: ToolExecutionContext,
  ): Promise<ToolResult<TDetails>> | ToolResult<TDetails>;
}

// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every parameter type.
export type AnyAgentTool = AgentTool<any, any>;

export const textResult = (text: string, isError = false): ToolResult => ({
  content: [{ type: "text", text }],
  isError,
});

export const NO_FACTS: Readonly<ToolCallFacts> = Object.freeze({});

/** Who answers for a tool's code in failures: the plugin that registered it, else `tool:<name>`. */
export const toolAuthor = (tool: AnyAgentTool): string => tool.owner ?? `tool:${tool.name}`;

/** Where and under what a call's `inspect` runs. */
export interface ViewOptions {
  place: ToolInspectionContext;
  signal: AbortSignal | undefined;
  /** The inspect's deadline (the harness's tap timeout). */
  timeoutMs: number | undefined;
}

/**
 * The one view of a tool call, built once after the final arguments are known:
 * the tool's `inspect` runs (through the plugin driver: tagged, timed, tracked),
 * its facts are deeply frozen, and the same frozen view is what the gates,
 * `permissionAsk`, `execute` and the `toolResult` / `toolUpdate` taps see.
 * Rejects with the driver's tagged failure when `inspect` throws, times out or
 * returns something other than an object.
 */
export async function viewToolCall(
  driver: Pick<PluginDriver, "run">,
  tool: AnyAgentTool,
  id: string,
  args: Record<string, unknown>,
  options: ViewOptions,
): Promise<ToolCallView> {
  let facts = NO_FACTS;
  if (tool.inspect) {
    const site = { plugin: toolAuthor(tool), hook: "inspect", toolCallId: id };
    const found = await driver.run<unknown>(
      site,
      { timeoutMs: options.timeoutMs, signal: options.signal },
      tool.inspect,
      tool,
      args,
      options.place,
    );
    if (found === null || typeof found !== "object") {
      throw pluginFailure(
        new TypeError(
          `inspect of tool "${tool.name}" returned ${found === null ? "null" : typeof found}, expected an object`,
        ),
        site,
      );
    }
    facts = deepFreeze(found as ToolCallFacts);
  }
  return Object.freeze({ id, name: tool.name, args, risk: tool.risk, facts, tool });
}

/** What a plugin failure says in the plugin's own words (a timeout or an abort: the harness's). */
export function failureText(error: unknown): string {
  const cause = error instanceof HarnessError && error.cause !== undefined ? error.cause : error;
  return describeError(cause);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
