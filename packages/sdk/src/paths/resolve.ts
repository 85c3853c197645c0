/**
 * The one canonical path resolver (security invariant 2). Every gate (policy,
 * permissions, audit) and every file tool reads the same answer, computed once in
 * the tool's `inspect`.
 *
 * Invariant: `absolute` is where the path really leads: the longest existing prefix
 * is `realpath`ed (every symlink followed, `..` collapsed, case as the file system
 * stores it), a dangling symlink on the way is followed by hand, and the missing
 * rest is appended. `relative` is that real path relative to the real project root
 * (the working directory), so `link -> .env`, `<symlinked cwd>/.env` and a tool
 * root in a subfolder all name the same file the same way. Inputs the kernel would
 * refuse (NUL, over PATH_MAX, a name over NAME_MAX, a symlink loop) are an
 * `invalid_path` error with a readable message, never a raw errno.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";
import { invalidPath, SdkError, SdkErrorCode } from "../errors.js";

/** Longest path accepted (Linux PATH_MAX is 4096 bytes including the NUL). */
export const MAX_PATH_BYTES = 4095;
/** Longest single name accepted (NAME_MAX on common file systems). */
export const MAX_NAME_BYTES = 255;
const MAX_LINK_DEPTH = 40;

/** A directory paths are resolved against: as given (made absolute) and its real location. */
export interface PathRoot {
  readonly lexical: string;
  readonly real: string;
}

/** One path resolved canonically. `relative` is to the project root, with `/` separators. */
export interface ResolvedPath {
  readonly input: string;
  /** Canonical absolute path: symlinks resolved, `..` collapsed, case as the file system has it. */
  readonly absolute: string;
  /** `absolute` relative to the real project root (`.` for the root itself; `../x` when outside). */
  readonly relative: string;
  /** Whether `absolute` is the tool root or below it. */
  readonly inside: boolean;
  /** The path as the tool resolved it, before symlinks: its root joined, `..` collapsed. */
  readonly lexical?: string;
  /** The tool's real root: rules are also matched relative to it, so the tool's own spelling of a file counts. */
  readonly root?: string;
}

/** Whether `child` is `parent` or below it (both absolute and normalized). */
export function isInside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

const toPosix = (rel: string) => (rel === "" ? "." : rel.split(path.sep).join("/"));

/** A root directory relative to `cwd` (default `cwd` itself); it must exist. */
export function pathRoot(cwd: string, root?: string): PathRoot {
  const lexical = path.resolve(cwd, root ?? ".");
  try {
    return { lexical, real: realpathSync.native(lexical) };
  } catch {
    throw new SdkError(SdkErrorCode.invalidPath, `the root directory ${lexical} does not exist`);
  }
}

function checkInput(input: unknown): string {
  if (typeof input !== "string") throw invalidPath(input, "is not a string");
  if (input.includes("\0")) throw invalidPath(input, "contains a NUL byte");
  const bytes = Buffer.byteLength(input, "utf8");
  if (bytes > MAX_PATH_BYTES) {
    throw invalidPath(input, `is ${bytes} bytes long, over the ${MAX_PATH_BYTES}-byte limit for a path`);
  }
  for (const name of input.split(/[\\/]/)) {
    if (Buffer.byteLength(name, "utf8") > MAX_NAME_BYTES) {
      throw invalidPath(input, `has a name over ${MAX_NAME_BYTES} bytes ("${name.slice(0, 20)}...")`);
    }
  }
  return input.trim() === "" ? "." : input;
}

/**
 * `realpath` for paths that may not exist (yet): the nearest existing ancestor is
 * resolved and the rest appended; a dangling symlink on the way is followed by hand
 * (its target may be outside even though it does not exist).
 */
export function realpathLoose(target: string, depth = 0): string {
  if (depth > MAX_LINK_DEPTH) throw invalidPath(target, "has too many levels of symbolic links");
  try {
    return realpathSync.native(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") throw invalidPath(target, "has too many levels of symbolic links");
    if (code === "ENAMETOOLONG") throw invalidPath(target, "is too long for the file system");
  }
  const parent = path.dirname(target);
  if (parent === target) return target;
  const candidate = path.join(realpathLoose(parent, depth), path.basename(target));
  let link: string;
  try {
    if (!lstatSync(candidate).isSymbolicLink()) return candidate;
    link = readlinkSync(candidate);
  } catch {
    return candidate; // does not exist (or a parent is a file): nothing more to follow
  }
  return realpathLoose(path.resolve(path.dirname(candidate), link), depth + 1);
}

/**
 * Resolves one path argument: relative to `root.lexical` (or absolute), then
 * canonically. `project` is the real project root `relative` is computed against
 * (default `root.real`).
 */
export function resolvePath(root: PathRoot, input: unknown, project: string = root.real): ResolvedPath {
  const given = checkInput(input);
  const lexical = path.resolve(root.lexical, given);
  const absolute = realpathLoose(lexical);
  return {
    input: given,
    absolute,
    relative: toPosix(path.relative(project, absolute)),
    inside: isInside(root.real, absolute),
    lexical,
    root: root.real,
  };
}

/** The lexical spelling of a path relative to a directory (`..` collapsed, no symlinks followed). */
export function lexicalRelative(base: string, input: string): string {
  return toPosix(path.relative(base, path.resolve(base, input)));
}
