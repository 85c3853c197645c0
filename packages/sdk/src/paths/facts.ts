/**
 * `facts.paths`: the canonical paths of one tool call, declared by the tool
 * (`defineTool({ paths: { path: "file" } })`) and resolved once in `inspect`.
 *
 * Invariant: a gate and the tool's `execute` read the same `ResolvedPathFacts`
 * (the harness freezes the facts between them), so what was decided is what runs.
 * A missing optional walk argument resolves to the tool root ("." walks the root),
 * so a walk always has a fact a rule can see.
 */
import { pathRoot, type ResolvedPath, resolvePath } from "./resolve.js";

/** `file`: the tool reads or writes this path. `walk`: the tool lists or searches below it. */
export type PathKind = "file" | "walk";

/** One path argument of a call, resolved canonically (see `resolvePath`). */
export interface ResolvedPathFacts extends ResolvedPath {
  /** The argument's name (`path`, `from`, ...). */
  readonly arg: string;
  readonly kind: PathKind;
}

declare module "@rein/harness" {
  interface ToolCallFacts {
    /** Every path argument of the call, canonical (symlinks resolved), in declaration order. */
    paths?: readonly ResolvedPathFacts[];
    /**
     * Paths a call's arguments name although its tool declares none (inferred by the
     * tool pack, e.g. `@rein/tools-mcp` for an MCP tool without a `paths` option),
     * canonical like `paths`. They can only tighten: deny and ask path rules match
     * them; nothing is allowed, granted or auto-approved because of them.
     */
    mentionedPaths?: readonly ResolvedPathFacts[];
  }
}

/** Which arguments of a tool are paths: `{ path: "file" }`, `{ path: "walk" }`. */
export type PathArgs = Readonly<Record<string, PathKind>>;

export interface PathInspection {
  /** The working directory (the project root facts' `relative` is computed against). */
  cwd: string;
  /** The tool's root, relative to `cwd` (default `cwd`): `inside` says whether a path is below it. */
  root?: string | undefined;
}

/**
 * Resolves the declared path arguments of one call. An argument holding an array of
 * strings (`paths: ["a", "b"]`) gives one fact per element, in order, all named by the
 * argument. Throws `invalid_path` for unusable input (an element that is not a string too).
 */
export function inspectPaths(
  args: Readonly<Record<string, unknown>>,
  declared: PathArgs,
  where: PathInspection,
): ResolvedPathFacts[] {
  const project = pathRoot(where.cwd).real;
  const root = pathRoot(where.cwd, where.root);
  const facts: ResolvedPathFacts[] = [];
  for (const [arg, kind] of Object.entries(declared)) {
    let value = args[arg];
    if (value === undefined || value === "") {
      if (kind === "file") continue;
      value = ".";
    }
    const values = Array.isArray(value) ? value : [value];
    for (const one of values) facts.push({ arg, kind, ...resolvePath(root, one, project) });
  }
  return facts;
}

/** The fact for one argument, if the call has it. */
export function pathFact(
  facts: { paths?: readonly ResolvedPathFacts[] } | undefined,
  arg: string,
): ResolvedPathFacts | undefined {
  return facts?.paths?.find((fact) => fact.arg === arg);
}
