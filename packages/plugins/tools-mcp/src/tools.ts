/**
 * Rein tools for one server's MCP tools.
 *
 * Invariants: each tool is an ordinary registered Rein tool (so every call passes
 * `toolCall`, `toolGate`, `permissionAsk` and `toolResult` like a built-in one);
 * its parameters are the server's JSON Schema (without `$schema`), checked to
 * compile with the harness's validator at registration, so the model's arguments
 * are validated against exactly what the server declared; its `execute` calls the
 * server by the MCP name and honours the abort signal and the call timeout.
 * A tool whose schema cannot be used is left out and reported, never registered
 * with a looser schema.
 */
import { type AnyAgentTool, defineTool, type PathArgs, type ProtectedFiles, type TSchema } from "@rein/sdk";
import { Compile } from "typebox/compile";
import type { McpToolInfo, ServerConnection } from "./connection.js";
import { toToolResult } from "./content.js";
import { describeError, invalidSchema, type McpToolError } from "./errors.js";
import { guardMentions, mentionsFacts } from "./mention-guard.js";
import { reinToolNames } from "./names.js";
import { guardPaths, pathArgsOf, pathRootOf } from "./paths.js";
import { riskFromAnnotations } from "./risk.js";

export interface BuiltTools {
  tools: AnyAgentTool[];
  /** Per Rein tool name: the MCP tool, its risk and path arguments (for status and `rein tools`). */
  entries: ToolEntry[];
  /** Tools left out, with why. */
  skipped: McpToolError[];
}

export interface ToolEntry {
  name: string;
  mcpName: string;
  risk: NonNullable<AnyAgentTool["risk"]>;
  paths: readonly string[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function parametersOf(server: string, tool: McpToolInfo): TSchema {
  const schema = tool.inputSchema;
  if (!isObject(schema) || schema.type !== "object") {
    throw invalidSchema(server, tool.name, 'expected an object schema ({ "type": "object", ... })');
  }
  const { $schema: _dialect, ...rest } = structuredClone(schema);
  try {
    Compile(rest as TSchema);
  } catch (error) {
    throw invalidSchema(server, tool.name, describeError(error));
  }
  return rest as TSchema;
}

function describe(server: string, tool: McpToolInfo): string {
  const text = tool.description?.trim() || tool.title?.trim() || `MCP tool ${tool.name}`;
  return `${text}\n(MCP server "${server}", tool "${tool.name}")`;
}

/** What the host offers the tools: Rein's protected files (for path arguments), the trace context. */
export interface ToolHost {
  protectedFiles?: ProtectedFiles | undefined;
  /** The calling span's `traceparent` for a tool call, when a tracer is loaded. */
  traceparentFor?: (toolCallId: string) => string | undefined;
}

export function buildTools(connection: ServerConnection, host: ToolHost = {}): BuiltTools {
  const { spec } = connection;
  const listed = connection.tools.filter(
    (tool) =>
      (spec.include === undefined || spec.include.includes(tool.name)) && !spec.exclude.includes(tool.name),
  );
  const names = reinToolNames(
    spec.name,
    listed.map((tool) => tool.name),
  );
  const result: BuiltTools = { tools: [], entries: [], skipped: [] };
  for (const info of listed) {
    const name = names.get(info.name) as string;
    let parameters: TSchema;
    let declared: PathArgs | undefined;
    try {
      parameters = parametersOf(spec.name, info);
      declared = pathArgsOf(spec, info);
    } catch (error) {
      result.skipped.push(error as McpToolError);
      continue;
    }
    const risk =
      spec.risks[info.name] ?? (spec.trustAnnotations ? riskFromAnnotations(info.annotations) : "exec");
    const mcpName = info.name;
    const root = pathRootOf(spec);
    const guard =
      declared === undefined
        ? undefined
        : { declared, root, writes: risk !== "read", protectedFiles: host.protectedFiles };
    const tool = defineTool({
      name,
      label: info.title ?? `${spec.name}: ${info.name}`,
      description: describe(spec.name, info),
      parameters,
      risk,
      ...(info.annotations?.idempotentHint === true ? { idempotent: true } : {}),
      ...(declared !== undefined
        ? { paths: declared, ...(root !== undefined ? { pathRoot: root } : {}) }
        : // No declaration: whatever the arguments name is still seen by the path rules.
          { inspect: (args, context) => mentionsFacts(spec.name, mcpName, args, context.cwd, root) }),
      async execute(args, context) {
        const sent =
          guard === undefined
            ? guardMentions(spec.name, mcpName, args as Record<string, unknown>, context, {
                root,
                writes: risk !== "read",
                protectedFiles: host.protectedFiles,
              })
            : guardPaths(
                spec.name,
                mcpName,
                args as Record<string, unknown>,
                context.facts,
                context.cwd,
                guard,
              );
        const traceparent = host.traceparentFor?.(context.toolCallId);
        const result = await connection.call(mcpName, sent, {
          signal: context.signal,
          ...(traceparent !== undefined ? { traceparent } : {}),
          onProgress: (progress) =>
            context.update({
              content: [
                {
                  type: "text",
                  text: `${progress.progress}${progress.total !== undefined ? `/${progress.total}` : ""}${progress.message ? ` ${progress.message}` : ""}`,
                },
              ],
            }),
        });
        return toToolResult(spec.name, mcpName, result);
      },
    });
    result.tools.push(tool);
    result.entries.push({ name, mcpName, risk, paths: Object.keys(declared ?? {}) });
  }
  return result;
}
