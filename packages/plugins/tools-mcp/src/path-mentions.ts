/**
 * Paths an MCP tool's arguments name when the config declares none for it (no
 * `paths` entry): found so that path rules hold by default (security invariant 8,
 * fail closed). A server's own read tool must not return `.env` past a
 * `read(.env)` deny just because nobody declared its `path` argument.
 *
 * What "names a path" means, for every string in the arguments (top level, in
 * arrays and in nested objects, up to 8 levels and 1,024 strings; a call with
 * more is refused, since what was not looked at cannot be decided):
 * - an absolute path (`/etc/passwd`);
 * - `~` or `~/...` (the user's home directory);
 * - a `file:` URI naming a local file (`file:///home/me/.env`, percent-decoding
 *   as the URL standard does);
 * - a relative path that starts with `.` (`./x`, `../x`, `.env`, `.git/config`),
 *   contains `/`, or is a single name with a dot in it (`rein.config.ts`,
 *   `notes.txt`), existing or not, unless it is a URL of another scheme
 *   (`https://...`);
 * - any other single name that exists (file, directory or symlink, dangling
 *   included) relative to the resolution root (the stdio server's `cwd`, else
 *   Rein's working directory). A dotless name that does not exist yet
 *   (`Makefile` about to be created) is not told from a word: declare `paths`
 *   for tools that create files.
 * A string with a line break, a NUL, over 4,095 bytes or a name over 255 bytes
 * is not a path (the kernel would refuse to open it); a value with spaces around
 * it is also tried trimmed. Each path found is resolved by the SDK's one resolver
 * (symlinks followed, `..` collapsed), exactly like a declared path, into
 * `facts.mentionedPaths`: deny and ask path rules see them; they never allow,
 * grant or auto-approve anything, and the server still gets the model's spelling
 * (declare `paths` to have the canonical path sent and the root enforced).
 */
import { lstatSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isSdkError, pathRoot, type ResolvedPathFacts, resolvePath } from "@rein/sdk";

const MAX_DEPTH = 8;
/** More strings than this in one call: refused rather than half inspected. */
export const MAX_STRINGS = 1024;
const MAX_PATH_BYTES = 4095;
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

export interface MentionRoot {
  /** Rein's working directory (the project root `relative` is computed against). */
  cwd: string;
  /** Where relative paths are resolved: the stdio server's working directory, else `cwd`. */
  root: string | undefined;
}

/** Thrown when a call holds more strings than can be inspected. */
export class TooManyStrings extends Error {}

/** Every string of a JSON value with where it sits (`path`, `files[0].path`), depth-first. */
function* stringsOf(value: unknown, where: string, depth: number): Generator<[string, string]> {
  if (typeof value === "string") {
    yield [where, value];
    return;
  }
  if (depth >= MAX_DEPTH || typeof value !== "object" || value === null) return;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) yield* stringsOf(item, `${where}[${index}]`, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    yield* stringsOf(item, where === "" ? key : `${where}.${key}`, depth + 1);
  }
}

const exists = (target: string) => {
  try {
    lstatSync(target);
    return true;
  } catch {
    return false;
  }
};

/** The path a string names (absolute, or relative to `base`), or undefined when it names none. */
export function pathSpelling(value: string, base: string): string | undefined {
  if (value === "" || value.includes("\n") || value.includes("\r") || value.includes("\0")) return undefined;
  if (Buffer.byteLength(value, "utf8") > MAX_PATH_BYTES) return undefined;
  if (/^file:/i.test(value)) {
    try {
      return fileURLToPath(value);
    } catch {
      return undefined; // a file URI of another host (or malformed): not a local file
    }
  }
  if (value === "~") return homedir();
  if (value.startsWith("~/")) return path.join(homedir(), value.slice(2));
  if (path.isAbsolute(value)) return value;
  if (URL_SCHEME.test(value)) return undefined;
  if (value.includes(".") || value.includes("/")) return value;
  return exists(path.resolve(base, value)) ? value : undefined;
}

/**
 * The canonical paths the call's arguments name (see the module comment). Throws
 * `TooManyStrings` for a call too large to inspect.
 */
export function mentionedPaths(
  args: Readonly<Record<string, unknown>>,
  where: MentionRoot,
): ResolvedPathFacts[] {
  const root = pathRoot(where.cwd, where.root);
  const project = pathRoot(where.cwd).real;
  const facts: ResolvedPathFacts[] = [];
  const seen = new Set<string>();
  let count = 0;
  for (const [arg, value] of stringsOf(args, "", 0)) {
    count += 1;
    if (count > MAX_STRINGS) throw new TooManyStrings(`more than ${MAX_STRINGS} strings in the arguments`);
    const tries = value.trim() === value ? [value] : [value, value.trim()];
    for (const one of tries) {
      const spelled = pathSpelling(one, root.lexical);
      if (spelled === undefined) continue;
      try {
        const resolved = resolvePath(root, spelled, project);
        const key = `${arg}\0${resolved.absolute}`;
        if (seen.has(key)) continue;
        seen.add(key);
        facts.push({ arg, kind: "file", ...resolved });
      } catch (error) {
        // Unusable as a path (a name over NAME_MAX, a symlink loop): nothing can be opened.
        if (!isSdkError(error)) throw error;
      }
    }
  }
  return facts;
}
