/**
 * Confinement, part 1: which file a call names. Every file tool acts on the
 * canonical path its `inspect` resolved (`context.facts.paths`, the SDK's one
 * resolver), the same object the gates decided on - never on a second resolution
 * of the model's string.
 *
 * Invariant: `targetOf` returns a path that is the root or inside it (really:
 * symlinks resolved); anything else is a `ToolInputError`, which becomes an error
 * result. Only when a tool runs without a harness (no facts) is the path resolved
 * here, with the same SDK resolver.
 */
import path from "node:path";
import {
  inspectPaths,
  isInside,
  isSdkError,
  type PathArgs,
  type PathRoot,
  pathFact,
  pathRoot,
  type ResolvedPathFacts,
  type ToolCallFacts,
} from "@rein/sdk";

/** A refusal or a failure the model should read as-is (becomes an error result). */
export class ToolInputError extends Error {
  override name = "ToolInputError";
}

export { isInside };
export type Root = PathRoot;

export interface Target {
  /** The canonical absolute path the tool operates on. */
  readonly real: string;
  /** The path relative to the tool root, for messages ("." for the root itself). */
  readonly display: string;
  /** The path relative to the project root (the working directory), for rules and exclusions. */
  readonly relative: string;
  readonly fact: ResolvedPathFacts;
}

/** Resolves the root (relative to `cwd`); it must exist. */
export function resolveRoot(cwd: string, root: string | undefined): Root {
  try {
    return pathRoot(cwd, root);
  } catch {
    throw new ToolInputError(`the root directory ${path.resolve(cwd, root ?? ".")} does not exist`);
  }
}

const toDisplay = (rel: string) => (rel === "" ? "." : rel.split(path.sep).join("/"));

/**
 * The call's canonical path for `arg`, refused unless inside the root. Reads the
 * facts the gates saw; resolves only when the tool was called without a harness.
 */
export function targetOf(
  facts: Readonly<ToolCallFacts>,
  args: Readonly<Record<string, unknown>>,
  declared: PathArgs,
  arg: string,
  cwd: string,
  root: Root,
): Target {
  let fact = pathFact(facts, arg);
  if (!fact) {
    try {
      fact = inspectPaths(args, declared, { cwd, root: root.lexical }).find((f) => f.arg === arg);
    } catch (error) {
      if (isSdkError(error)) throw new ToolInputError(error.message);
      throw error;
    }
  }
  if (!fact) throw new ToolInputError(`argument ${arg} is missing`);
  if (!fact.inside) {
    const lexical = path.resolve(root.lexical, fact.input);
    const throughLink = isInside(root.lexical, lexical) || isInside(root.real, lexical);
    throw new ToolInputError(
      throughLink
        ? `path ${JSON.stringify(fact.input)} resolves through a symbolic link to ${fact.absolute}, which is outside the root ${root.lexical}`
        : `path ${JSON.stringify(fact.input)} is outside the root ${root.lexical}`,
    );
  }
  return {
    real: fact.absolute,
    display: toDisplay(path.relative(root.real, fact.absolute)),
    relative: fact.relative,
    fact,
  };
}

/** A relative path with `/` separators ("." for the root itself). */
export { toDisplay };
