/**
 * Path arguments of MCP tools (option `paths`): the same canonical resolution as
 * a built-in file tool's, and the call made on what the gates decided.
 *
 * Invariants:
 * - a tool's declared path arguments go to `defineTool({ paths, pathRoot })`, so
 *   `call.facts.paths` is filled by the SDK's one resolver (symlinks resolved, `..`
 *   collapsed) and every gate - policy `path` rules, permissions grants, audit - sees
 *   the canonical paths; an array of paths gives one fact per element;
 * - the server is sent the canonical absolute paths the gates saw, never the
 *   model's spelling, so a symlink swapped after the decision cannot redirect it;
 * - a path outside the root (the stdio server's `cwd`, else Rein's) is refused
 *   before the server is called, and so is a write (any risk but `read`) to Rein's
 *   own files (protected files the host registered, `.rein/`, `rein.config.*`,
 *   `.rein-plugins/`);
 * - an explicitly named tool whose `paths` entry names an argument the tool does not
 *   have is left out (a path the config author meant to be checked would not be);
 *   a `*` entry applies to the arguments each tool has.
 */
import {
  inspectPaths,
  isSdkError,
  type PathArgs,
  type ProtectedFiles,
  type ResolvedPathFacts,
  type ToolCallFacts,
} from "@rein/sdk";
import picomatch from "picomatch";
import type { McpToolInfo } from "./connection.js";
import { invalidPaths, pathRefused } from "./errors.js";
import type { ServerSpec } from "./options.js";

/** Matched on the canonical path relative to the working directory, like `@rein/tools-fs`'s defaults. */
export const PROTECTED_PATHS: readonly string[] = [
  ".rein",
  ".rein/**",
  "rein.config.*",
  "**/rein.config.*",
  ".rein-plugins/**",
];
const isReinState = picomatch([...PROTECTED_PATHS], { dot: true });

const propertiesOf = (tool: McpToolInfo): Record<string, unknown> => {
  const properties = (tool.inputSchema as { properties?: unknown }).properties;
  return typeof properties === "object" && properties !== null ? (properties as Record<string, unknown>) : {};
};

/** The tool's path arguments; throws `invalid_paths` when its own entry names an argument it lacks. */
export function pathArgsOf(spec: ServerSpec, tool: McpToolInfo): PathArgs | undefined {
  const properties = propertiesOf(tool);
  const own = spec.paths[tool.name];
  if (own !== undefined) {
    const missing = Object.keys(own).filter((arg) => !(arg in properties));
    if (missing.length > 0) {
      throw invalidPaths(
        spec.name,
        tool.name,
        `paths.${tool.name} names ${missing.map((arg) => JSON.stringify(arg)).join(", ")}, which the tool does not take (it takes ${Object.keys(properties).join(", ") || "no arguments"})`,
      );
    }
    return Object.keys(own).length > 0 ? own : undefined;
  }
  const any = spec.paths["*"];
  if (any === undefined) return undefined;
  const kept = Object.entries(any).filter(([arg]) => arg in properties);
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** Throws `path_refused` when `fact` is one of Rein's own files (a write must not reach them). */
export function refuseReinState(
  server: string,
  tool: string,
  fact: ResolvedPathFacts,
  protectedFiles: ProtectedFiles | undefined,
): void {
  const owner = protectedFiles?.protectedBy(fact.absolute);
  const inProject = fact.relative !== ".." && !fact.relative.startsWith("../");
  if (owner !== undefined || (inProject && isReinState(fact.relative))) {
    throw pathRefused(
      server,
      tool,
      `path ${JSON.stringify(fact.input)} is protected (${owner !== undefined ? `${owner} loaded it: ` : ""}Rein's own state or config); MCP tools that may write do not get it`,
    );
  }
}

/** Where path arguments are resolved: the stdio server's working directory, else Rein's. */
export const pathRootOf = (spec: ServerSpec): string | undefined =>
  spec.transport.kind === "stdio" ? spec.transport.cwd : undefined;

export interface PathGuard {
  declared: PathArgs;
  root: string | undefined;
  /** Whether the tool may write (risk other than `read`): protected files are then refused. */
  writes: boolean;
  protectedFiles: ProtectedFiles | undefined;
}

/**
 * The arguments to send: each declared path replaced by its canonical absolute path
 * (arrays element by element). Throws `path_refused` for a path outside the root or a
 * protected file the tool could write.
 */
export function guardPaths(
  server: string,
  tool: string,
  args: Record<string, unknown>,
  facts: Readonly<ToolCallFacts>,
  cwd: string,
  guard: PathGuard,
): Record<string, unknown> {
  let resolved: readonly ResolvedPathFacts[] | undefined = facts.paths;
  if (resolved === undefined) {
    // Called without a harness (no inspect ran): resolve here with the same resolver.
    try {
      resolved = inspectPaths(args, guard.declared, { cwd, root: guard.root });
    } catch (error) {
      if (isSdkError(error)) throw pathRefused(server, tool, error.message);
      throw error;
    }
  }
  const out: Record<string, unknown> = { ...args };
  for (const arg of Object.keys(guard.declared)) {
    const mine = resolved.filter((fact) => fact.arg === arg);
    if (mine.length === 0) continue;
    for (const fact of mine) {
      if (!fact.inside) {
        throw pathRefused(
          server,
          tool,
          `path ${JSON.stringify(fact.input)} resolves to ${fact.absolute}, which is outside the root ${guard.root ?? cwd}`,
        );
      }
      if (!guard.writes) continue;
      refuseReinState(server, tool, fact, guard.protectedFiles);
    }
    const given = args[arg];
    out[arg] = Array.isArray(given)
      ? mine.map((fact) => fact.absolute)
      : (mine[0] as ResolvedPathFacts).absolute;
  }
  return out;
}
