/**
 * The call `rein check` decides, from the command line or stdin: `bash(git push)`
 * (the shorthand: the text in parentheses is the tool's primary argument),
 * `write --arg path=src/../.env` (`key=value` a string, `key:=json` any JSON
 * value), or a JSON call `{"name": ..., "arguments": {...}}` on stdin (or `-`).
 *
 * Invariant: every problem is a usage error naming the part at fault and what
 * was expected; nothing here loads the config or a plugin.
 */
import type { AnyAgentTool } from "@rein/harness";
import { usageError } from "../errors.js";

/** A call as the user wrote it: the tool name, the arguments, and the shorthand's value if one was given. */
export interface CheckInput {
  name: string;
  args: Record<string, unknown>;
  /** The text inside `tool(...)`, for the tool's primary argument. */
  primary?: string;
}

const TOOL_NAME = /^[\w.:-]+$/;
const SHORTHAND = /^([\w.:-]+)\(([\s\S]*)\)$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `--arg` values, repeatable: `key=value` is a string, `key:=json` a JSON value. */
export function parseArgs(pairs: readonly string[]): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const json = /^([^=:]+):=([\s\S]*)$/.exec(pair);
    const text = /^([^=]+)=([\s\S]*)$/.exec(pair);
    const key = (json ?? text)?.[1];
    if (key === undefined || key.trim() === "") {
      throw usageError(
        `--arg ${JSON.stringify(pair)}: expected key=value (a string) or key:=json (any JSON value)`,
      );
    }
    if (Object.hasOwn(args, key)) throw usageError(`--arg ${key} is given twice`);
    if (json) {
      try {
        args[key] = JSON.parse(json[2] as string) as unknown;
      } catch (error) {
        throw usageError(`--arg ${key}:= expects JSON: ${(error as Error).message}`);
      }
    } else {
      args[key] = text?.[2] as string;
    }
  }
  return args;
}

/** A JSON call: `{"name": "bash", "arguments": {...}}` (pi-ai's tool-call shape works too). */
export function parseJsonCall(text: string, where: string): CheckInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw usageError(
      `${where}: not JSON: ${(error as Error).message}`,
      'expected {"name": "<tool>", "arguments": {...}}',
    );
  }
  if (!isObject(value) || typeof value.name !== "string" || value.name === "") {
    throw usageError(
      `${where}: expected an object with a "name" (the tool) and "arguments"`,
      'e.g. {"name": "bash", "arguments": {"command": "ls"}}',
    );
  }
  const args = value.arguments ?? {};
  if (!isObject(args)) throw usageError(`${where}: "arguments" must be an object`);
  return { name: value.name, args: { ...args } };
}

/** The call from the positional argument (or stdin's text when it is absent or `-`) and the `--arg` pairs. */
export function parseCall(
  call: string | undefined,
  pairs: readonly string[],
  stdin: () => string,
): CheckInput {
  const extra = parseArgs(pairs);
  let input: CheckInput;
  if (call === undefined || call === "-") {
    input = parseJsonCall(stdin(), "the call on stdin");
  } else if (call.trimStart().startsWith("{")) {
    input = parseJsonCall(call, "the call");
  } else {
    const short = SHORTHAND.exec(call.trim());
    if (short) input = { name: short[1] as string, args: {}, primary: short[2] as string };
    else if (TOOL_NAME.test(call)) input = { name: call, args: {} };
    else {
      throw usageError(
        `cannot read the call ${JSON.stringify(call)}`,
        "write tool(primary argument), a tool name with --arg key=value, or a JSON call on stdin",
      );
    }
  }
  for (const [key, value] of Object.entries(extra)) {
    if (Object.hasOwn(input.args, key)) throw usageError(`--arg ${key}: the call already sets "${key}"`);
    input.args[key] = value;
  }
  return input;
}

/**
 * The parameter the shorthand `tool(text)` fills: the tool's first required
 * parameter whose schema is a string (`command` for bash, `path` for read and
 * write); `undefined` when it has none.
 */
export function primaryParameter(tool: AnyAgentTool): string | undefined {
  const schema = tool.parameters as { required?: unknown; properties?: Record<string, { type?: unknown }> };
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return required.find((name) => schema.properties?.[name]?.type === "string");
}

/** The call's arguments with the shorthand's text in the tool's primary parameter. */
export function argumentsFor(input: CheckInput, tool: AnyAgentTool | undefined): Record<string, unknown> {
  if (input.primary === undefined) return input.args;
  const primary = tool ? primaryParameter(tool) : undefined;
  if (!tool) return input.args; // unknown tools are refused by the caller before this matters
  if (primary === undefined) {
    throw usageError(
      `${input.name}(...) needs a tool with a required string parameter; ${input.name} has none`,
      `give its arguments with --arg key=value, or as JSON: rein check '{"name":"${input.name}","arguments":{...}}'`,
    );
  }
  if (Object.hasOwn(input.args, primary)) {
    throw usageError(`--arg ${primary}: ${input.name}(...) already gives ${primary}`);
  }
  return { [primary]: input.primary, ...input.args };
}
