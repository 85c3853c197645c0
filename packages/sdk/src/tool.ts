/**
 * `defineTool`: the one way a plugin or tool pack declares a tool.
 *
 * Invariant: what `defineTool` returns is a well-formed, frozen `AgentTool`. Every
 * malformation (name, description, schema, execute, risk, mode) is reported here,
 * at definition time and naming the tool, rather than later inside a run where the
 * model would be the first to notice. `args` is typed from the schema; the harness
 * validates the model's arguments against the same schema before `execute` runs.
 */
import type { AgentTool } from "@rein/harness";
import { TOOL_NAME_PATTERN, TOOL_RISKS } from "@rein/harness";
import type { TSchema } from "typebox";
import { invalidTool } from "./errors.js";

/**
 * What `defineTool` takes: a harness tool without `owner` (the plugin host sets
 * that). `execute`'s `args` are typed from `parameters` and already validated.
 */
export type ToolDefinition<TParams extends TSchema = TSchema, TDetails = unknown> = Omit<
  AgentTool<TParams, TDetails>,
  "owner"
>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function defineTool<TParams extends TSchema, TDetails = unknown>(
  definition: ToolDefinition<TParams, TDetails>,
): AgentTool<TParams, TDetails> {
  if (!isObject(definition)) throw invalidTool(undefined, "expected a tool definition object");
  const { name } = definition;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw invalidTool(
      typeof name === "string" ? name : undefined,
      `name ${JSON.stringify(name)} is invalid (expected 1-64 of A-Z a-z 0-9 _ -)`,
    );
  }
  if (typeof definition.description !== "string" || definition.description.trim() === "") {
    throw invalidTool(name, "description must be a non-empty string (the model reads it)");
  }
  const parameters: unknown = definition.parameters;
  if (!isObject(parameters) || parameters.type !== "object") {
    throw invalidTool(name, "parameters must be an object schema, e.g. Type.Object({ ... })");
  }
  if (typeof definition.execute !== "function") throw invalidTool(name, "execute must be a function");
  if (definition.label !== undefined && typeof definition.label !== "string") {
    throw invalidTool(name, "label must be a string");
  }
  if (definition.risk !== undefined && !TOOL_RISKS.includes(definition.risk)) {
    throw invalidTool(
      name,
      `risk ${JSON.stringify(definition.risk)} is invalid (expected one of ${TOOL_RISKS.join(", ")})`,
    );
  }
  if (
    definition.executionMode !== undefined &&
    definition.executionMode !== "parallel" &&
    definition.executionMode !== "sequential"
  ) {
    throw invalidTool(name, 'executionMode must be "parallel" or "sequential"');
  }
  if (definition.idempotent !== undefined && typeof definition.idempotent !== "boolean") {
    throw invalidTool(name, "idempotent must be a boolean");
  }
  if (definition.inspect !== undefined && typeof definition.inspect !== "function") {
    throw invalidTool(name, "inspect must be a function");
  }
  // Copy only known fields: a tool is an immutable value the harness snapshots per turn.
  const tool: AgentTool<TParams, TDetails> = {
    name,
    description: definition.description,
    parameters: definition.parameters,
    execute: definition.execute,
  };
  if (definition.label !== undefined) tool.label = definition.label;
  if (definition.risk !== undefined) tool.risk = definition.risk;
  if (definition.executionMode !== undefined) tool.executionMode = definition.executionMode;
  if (definition.idempotent !== undefined) tool.idempotent = definition.idempotent;
  if (definition.inspect !== undefined) tool.inspect = definition.inspect;
  return Object.freeze(tool);
}

/** Whether a value looks like a tool (as `defineTool` returns), for telling tool packs from plugins. */
export function isAgentToolLike(value: unknown): value is AgentTool {
  return isObject(value) && typeof value.name === "string" && typeof value.execute === "function";
}
