/**
 * Confinement: every path a file tool touches is resolved here, and nothing outside
 * the root gets through.
 *
 * Invariant: `resolveInRoot` returns a path whose *real* location (every symlink on
 * the way followed, including a dangling last link) is the root or inside it. Two
 * checks: the lexical one (`..`, absolute paths elsewhere) and the real one, which
 * `realpath`s the nearest existing ancestor, so a path through a symlinked directory
 * pointing outside is refused even when the file itself does not exist yet (write).
 * The tools then operate on the returned real path, never on the model's string.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** A refusal or a failure the model should read as-is (becomes an error result). */
export class ToolInputError extends Error {
  override name = "ToolInputError";
}

export interface Root {
  /** The root as configured, made absolute (may contain symlinks). */
  readonly lexical: string;
  /** The root with symlinks resolved: what every real path is checked against. */
  readonly real: string;
}

export interface ResolvedPath {
  /** The real absolute path (symlinks resolved) the tool should operate on. */
  readonly real: string;
  /** The path relative to the root, for messages ("." for the root itself). */
  readonly display: string;
}

const MAX_LINK_DEPTH = 40;

/** Whether `child` is `parent` or below it (both absolute and normalized). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** Resolves the root (relative to `cwd`); it must exist. */
export function resolveRoot(cwd: string, root: string | undefined): Root {
  const lexical = resolve(cwd, root ?? ".");
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch {
    throw new ToolInputError(`the root directory ${lexical} does not exist`);
  }
  return { lexical, real };
}

/**
 * `realpath` that also works for paths that do not exist (yet): the nearest existing
 * ancestor is resolved and the rest appended; a dangling symlink on the way is
 * followed by hand (its target may be outside even though it does not exist).
 */
export function realpathLoose(path: string, depth = 0): string {
  if (depth > MAX_LINK_DEPTH) throw new ToolInputError(`too many levels of symbolic links at ${path}`);
  try {
    return realpathSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw new ToolInputError(`too many levels of symbolic links at ${path}`);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const candidate = join(realpathLoose(parent, depth), basename(path));
  let isLink = false;
  try {
    isLink = lstatSync(candidate).isSymbolicLink();
  } catch {
    return candidate; // does not exist: nothing more to follow
  }
  if (!isLink) return candidate;
  // A symlink realpath could not resolve (dangling or a loop): follow it by hand.
  return realpathLoose(resolve(dirname(candidate), readlinkSync(candidate)), depth + 1);
}

/**
 * Resolves a path the model gave (relative to the root, or absolute) and refuses
 * anything whose real location is outside the root.
 */
export function resolveInRoot(root: Root, input: string): ResolvedPath {
  if (input.includes("\0")) throw new ToolInputError(`path ${JSON.stringify(input)} contains a NUL byte`);
  const trimmed = input.trim() === "" ? "." : input;
  const absolute = resolve(root.lexical, trimmed);
  // Absolute paths may name the root in either spelling (lexical or real).
  const lexicalBase = isInside(root.lexical, absolute)
    ? root.lexical
    : isInside(root.real, absolute)
      ? root.real
      : undefined;
  if (lexicalBase === undefined) {
    throw new ToolInputError(`path ${JSON.stringify(input)} is outside the root ${root.lexical}`);
  }
  const real = realpathLoose(absolute);
  if (!isInside(root.real, real)) {
    throw new ToolInputError(
      `path ${JSON.stringify(input)} resolves through a symbolic link to ${real}, which is outside the root ${root.lexical}`,
    );
  }
  return { real, display: toDisplay(relative(lexicalBase, absolute)) };
}

/** A relative path with `/` separators ("." for the root itself). */
export function toDisplay(rel: string): string {
  return rel === "" ? "." : rel.split(sep).join("/");
}
