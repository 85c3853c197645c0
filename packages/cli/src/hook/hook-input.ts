/**
 * What an agent's hook command gets on stdin, read and checked once: the
 * event, the agent's session id, the working directory and the event's own
 * fields (tool name and input, result, prompt), normalised to Claude Code's
 * event names (Codex uses them as they are; Gemini CLI's `BeforeTool` is
 * `PreToolUse` here, see agent-protocols.ts).
 *
 * Invariant: anything that is not the documented shape is a `HookInputError`
 * naming the field; the caller turns it into a block (fail closed), never a
 * guess.
 */
import { type AgentName, canonicalEvent, type HookEvent } from "./agent-protocols.js";

export interface HookInput {
  agent: AgentName;
  /** The event as the agent named it (`BeforeTool` for Gemini). */
  agentEvent: string;
  event: HookEvent;
  sessionId: string;
  cwd: string;
  toolName?: string;
  toolInput?: Record<string, unknown>;
  toolUseId?: string;
  toolResponse?: unknown;
  prompt?: string;
  turnId?: string;
  /** Codex's and Claude Code's `stop_hook_active`: a Stop hook already asked for more in this turn. */
  stopHookActive?: boolean;
  /** Gemini CLI's MCP context (`server_name`, `tool_name`). */
  mcpContext?: { server: string; tool: string };
  /** The whole object as received (kept for the audit). */
  raw: Record<string, unknown>;
}

export class HookInputError extends Error {
  override readonly name = "HookInputError";
}

/** The most a hook input may hold: agents send one call's input, never megabytes. */
export const MAX_INPUT_BYTES = 8 * 1024 * 1024;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function text(raw: Record<string, unknown>, field: string, required: boolean): string | undefined {
  const value = raw[field];
  if (value === undefined || value === null) {
    if (required) throw new HookInputError(`the hook input has no "${field}"`);
    return undefined;
  }
  if (typeof value !== "string") throw new HookInputError(`the hook input's "${field}" is not a string`);
  return value;
}

/** Parses and checks one hook input document from `agent`. */
export function parseHookInput(agent: AgentName, source: string): HookInput {
  if (Buffer.byteLength(source) > MAX_INPUT_BYTES)
    throw new HookInputError(`the hook input is larger than ${MAX_INPUT_BYTES} bytes`);
  if (source.trim() === "") throw new HookInputError("the hook input on stdin is empty");
  let raw: unknown;
  try {
    raw = JSON.parse(source);
  } catch (error) {
    throw new HookInputError(`the hook input is not JSON: ${(error as Error).message}`);
  }
  if (!isObject(raw)) throw new HookInputError("the hook input is not a JSON object");
  const agentEvent = text(raw, "hook_event_name", true) as string;
  const event = canonicalEvent(agent, agentEvent);
  if (event === undefined) throw new HookInputError(`unknown hook event "${agentEvent}" for ${agent}`);
  const input: HookInput = {
    agent,
    agentEvent,
    event,
    sessionId: text(raw, "session_id", true) as string,
    cwd: text(raw, "cwd", true) as string,
    raw,
  };
  if (input.sessionId === "") throw new HookInputError('the hook input\'s "session_id" is empty');
  const isToolEvent = event === "PreToolUse" || event === "PostToolUse" || event === "PermissionRequest";
  if (isToolEvent) {
    input.toolName = text(raw, "tool_name", true) as string;
    const toolInput = raw.tool_input ?? {};
    if (!isObject(toolInput)) throw new HookInputError('the hook input\'s "tool_input" is not an object');
    input.toolInput = toolInput;
    const id = text(raw, "tool_use_id", false);
    if (id !== undefined) input.toolUseId = id;
  }
  if (event === "PostToolUse") input.toolResponse = raw.tool_response;
  const prompt = text(raw, "prompt", false);
  if (prompt !== undefined) input.prompt = prompt;
  const turnId = text(raw, "turn_id", false);
  if (turnId !== undefined) input.turnId = turnId;
  if (typeof raw.stop_hook_active === "boolean") input.stopHookActive = raw.stop_hook_active;
  const mcp = raw.mcp_context;
  if (isObject(mcp) && typeof mcp.server_name === "string" && typeof mcp.tool_name === "string")
    input.mcpContext = { server: mcp.server_name, tool: mcp.tool_name };
  return input;
}
