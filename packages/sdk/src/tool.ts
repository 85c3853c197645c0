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
import { inspectPaths, type PathArgs } from "./paths/facts.js";

/**
 * What `defineTool` takes: a harness tool without `owner` (the plugin host sets
 * that). `execute`'s `args` are typed from `parameters` and already validated.
 */
export type ToolDefinition<TParams extends TSchema = TSchema, TDetails = unknown> = Omit<
  AgentTool<TParams, TDetails>,
  "owner"
> & {
  /**
   * Which arguments are paths: `{ path: "file" }` for a file the tool reads or
   * writes, `{ path: "walk" }` for a directory it lists or searches. The generated
   * `inspect` resolves them once into `facts.paths` (canonical, symlinks resolved),
   * which the gates decide on and `execute` must act on.
   */
  paths?: PathArgs;
  /** The directory path arguments are resolved against, relative to the working directory (default: it). */
  pathRoot?: string;
};

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
  const declared = definition.paths;
  if (declared !== undefined) {
    if (!isObject(declared)) throw invalidTool(name, 'paths must be an object such as { path: "file" }');
    const properties = (parameters.properties ?? {}) as Record<string, unknown>;
    for (const [arg, kind] of Object.entries(declared)) {
      if (kind !== "file" && kind !== "walk") {
        throw invalidTool(name, `paths.${arg} must be "file" or "walk", got ${JSON.stringify(kind)}`);
      }
      if (!(arg in properties)) throw invalidTool(name, `paths.${arg} names no parameter of the tool`);
    }
  }
  if (definition.pathRoot !== undefined && typeof definition.pathRoot !== "string") {
    throw invalidTool(name, "pathRoot must be a string");
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
  const own = definition.inspect;
  if (declared !== undefined) {
    const pathArgs = Object.freeze({ ...declared }) as PathArgs;
    const root = definition.pathRoot;
    tool.inspect = async (args, context) => {
      const facts = own ? await own(args, context) : {};
      const paths = inspectPaths(args as Record<string, unknown>, pathArgs, { cwd: context.cwd, root });
      return { ...facts, paths };
    };
  } else if (own !== undefined) {
    tool.inspect = own;
  }
  return Object.freeze(tool);
}

/** Whether a value looks like a tool (as `defineTool` returns), for telling tool packs from plugins. */
export function isAgentToolLike(value: unknown): value is AgentTool {
  return isObject(value) && typeof value.name === "string" && typeof value.execute === "function";
}
