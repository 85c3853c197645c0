/**
 * Tool definitions. A tool is an immutable value: the harness replaces tools through
 * setters and never edits one in place, so a turn snapshot's shallow copy stays true
 * for the whole turn (spec: "Turn snapshot").
 */
import type { ImageContent, Static, TextContent, TSchema } from "@mariozechner/pi-ai";

/** What a tool may be called: 1-64 of A-Z a-z 0-9 _ - (what providers accept). */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export type ToolRisk = "read" | "write" | "exec" | "network";
export const TOOL_RISKS: readonly ToolRisk[] = ["read", "write", "exec", "network"];

export interface ToolResult<TDetails = unknown> {
  content: (TextContent | ImageContent)[];
  details?: TDetails;
  isError?: boolean;
}

export interface ToolExecutionContext {
  /** Aborted when the run is aborted; a tool should stop as soon as it can. */
  signal: AbortSignal;
  /** Reports progress; becomes a `tool_execution_update` event. */
  update(partial: ToolResult): void;
  cwd: string;
  sessionId: string;
  toolCallId: string;
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
