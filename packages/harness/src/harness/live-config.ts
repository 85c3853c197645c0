/**
 * Live config: what the application wants next (spec "Three kinds of state").
 * Setters validate and apply at once; they never touch a turn already running,
 * because each turn works from its own snapshot (turn-snapshot.ts).
 */
import type { Model } from "@earendil-works/pi-ai";
import { invalidArgument } from "../errors.js";
import type { AgentInfo, GateVerdict, RequestOptions, ToolGateCall } from "../hooks/hook-types.js";
import { THINKING_LEVELS, type ThinkingLevel } from "../session/entries.js";
import { type AnyAgentTool, TOOL_NAME_PATTERN } from "../tools.js";
import type { QueueModes } from "./message-queues.js";

export interface SystemPromptInput {
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  tools: readonly AnyAgentTool[];
  resources: Readonly<Record<string, unknown>>;
}

/** A system prompt, or a function resolving it at the start of each turn. */
export type SystemPromptSource = string | ((input: SystemPromptInput) => string | Promise<string>);

/** The verdict when no gate tap has an opinion: a fixed decision, or one computed per call. */
export type DefaultToolVerdict = GateVerdict["decision"] | ((call: ToolGateCall) => GateVerdict);

export { THINKING_LEVELS };

export interface LiveConfig {
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
  tools: readonly AnyAgentTool[];
  /** `undefined`: every registered tool is active. */
  activeToolNames: readonly string[] | undefined;
  systemPrompt: SystemPromptSource;
  resources: Readonly<Record<string, unknown>>;
  requestOptions: Readonly<RequestOptions>;
  queueModes: QueueModes;
  defaultToolVerdict: DefaultToolVerdict;
  /** What an `ask` no `permissionAsk` tap answers becomes: `deny`, or `park` (durable approvals). */
  onUnanswered: "deny" | "park";
  cwd: string;
  /** Whether tool decisions record every tap's step (option `decisions.trail`). */
  decisionTrail: boolean;
  /** Set in a child agent (option `agent`); fixed for the harness's life. */
  agent: AgentInfo | undefined;
}

const RISKS = new Set(["read", "write", "exec", "network"]);

export function validateTools(tools: readonly AnyAgentTool[]): void {
  if (!Array.isArray(tools))
    throw invalidArgument(`tools must be an array of tool definitions, not ${typeof tools}`);
  const seen = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    if (!tool || typeof tool.name !== "string" || !TOOL_NAME_PATTERN.test(tool.name)) {
      throw invalidArgument(
        `tools[${index}]: tool name ${JSON.stringify(tool?.name)} is invalid (expected 1-64 of A-Z a-z 0-9 _ -)`,
      );
    }
    if (seen.has(tool.name)) throw invalidArgument(`tools[${index}]: duplicate tool name "${tool.name}"`);
    if (typeof tool.execute !== "function")
      throw invalidArgument(`tool "${tool.name}" has no execute function`);
    if (typeof tool.parameters !== "object" || tool.parameters === null) {
      throw invalidArgument(`tool "${tool.name}" has no parameters schema`);
    }
    if (tool.risk !== undefined && !RISKS.has(tool.risk)) {
      throw invalidArgument(
        `tool "${tool.name}": risk must be read, write, exec or network, not ${JSON.stringify(tool.risk)}`,
      );
    }
    if (
      tool.executionMode !== undefined &&
      tool.executionMode !== "parallel" &&
      tool.executionMode !== "sequential"
    ) {
      throw invalidArgument(
        `tool "${tool.name}": executionMode must be parallel or sequential, not ${JSON.stringify(tool.executionMode)}`,
      );
    }
    if (tool.idempotent !== undefined && typeof tool.idempotent !== "boolean") {
      throw invalidArgument(`tool "${tool.name}": idempotent must be a boolean`);
    }
    if (tool.owner !== undefined && typeof tool.owner !== "string") {
      throw invalidArgument(`tool "${tool.name}": owner must be a string`);
    }
    seen.add(tool.name);
  }
}

export function validateActiveTools(names: readonly string[], tools: readonly AnyAgentTool[]): void {
  if (!Array.isArray(names) || names.some((name) => typeof name !== "string")) {
    throw invalidArgument("active tools must be an array of tool names");
  }
  const known = new Set(tools.map((tool) => tool.name));
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length > 0) {
    throw invalidArgument(
      `unknown active tool${unknown.length > 1 ? "s" : ""} ${unknown.map((n) => `"${n}"`).join(", ")} (registered: ${[...known].join(", ") || "none"})`,
    );
  }
}

export function validateThinkingLevel(level: string): asserts level is ThinkingLevel {
  if (!THINKING_LEVELS.includes(level as ThinkingLevel)) {
    throw invalidArgument(
      `thinking level ${JSON.stringify(level) ?? String(level)} is invalid (expected one of ${THINKING_LEVELS.join(", ")})`,
    );
  }
}

/** The tools a turn exposes to the model, in registration order. */
export function activeTools(config: LiveConfig): readonly AnyAgentTool[] {
  const names = config.activeToolNames;
  if (names === undefined) return config.tools;
  const wanted = new Set(names);
  return config.tools.filter((tool) => wanted.has(tool.name));
}

/** The system prompt a turn (or `beforeRun`) uses: the string, or the provider function's answer now. */
export async function resolveSystemPrompt(config: LiveConfig): Promise<string> {
  const source = config.systemPrompt;
  if (typeof source === "string") return source;
  return source({ model: config.model, tools: activeTools(config), resources: config.resources });
}
