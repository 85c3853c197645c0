/**
 * Protected paths (invariants 4 and 9): write and edit refuse Rein's and git's own
 * state, whatever spelling reaches it, because the check runs on the canonical path
 * (symlinks and `..` resolved, also for a file that does not exist yet).
 *
 * Always refused, at any depth below the root or the working directory, existing or
 * not: `.rein/`, `.rein-plugins/`, every `rein.config.*` name and `.git` (directory or
 * a worktree's file, with all it holds: git runs hooks and reads config from it
 * later, unsandboxed). These are names, not globs a config can replace: the
 * `protectedPaths` option only adds to them. Plus every file the host registered
 * (`protectedFiles`: its config layers, the plugin modules it loaded and their imports).
 */
import path from "node:path";
import type { ProtectedFiles } from "@rein/sdk";
import picomatch from "picomatch";
import { type Target, ToolInputError } from "./paths.js";

export type ProtectedCheck = (target: Target, display: string) => void;

const STATE_DIRS = new Set([".rein", ".rein-plugins", ".git"]);
const CONFIG_NAME = /^rein\.config\.[^/]*$/;

/** The segment of `relative` that makes it Rein's or git's state, if any. */
export function reinStateSegment(relative: string): string | undefined {
  if (relative === "" || relative === "." || relative === ".." || relative.startsWith(`..${path.sep}`))
    return undefined;
  const segments = relative.split(/[\\/]/);
  const dir = segments.find((segment) => STATE_DIRS.has(segment));
  if (dir !== undefined) return dir;
  const last = segments.at(-1) ?? "";
  return CONFIG_NAME.test(last) ? last : undefined;
}

/** Refuses Rein's and git's state, a target matching the extra globs, or a file the host protects. */
export function protectedCheck(globs: readonly string[], files?: ProtectedFiles): ProtectedCheck {
  const match = globs.length === 0 ? () => false : picomatch([...globs], { dot: true });
  return (target, display) => {
    const owner = files?.protectedBy(target.real);
    if (owner !== undefined) {
      throw new ToolInputError(
        `path ${JSON.stringify(display)} is protected (${owner} loaded it: Rein's own config or plugin files); file tools do not write it`,
      );
    }
    const relative = target.relative;
    // Both bases: the root may be a subfolder of the working directory or lie beside it.
    const state = reinStateSegment(relative) ?? reinStateSegment(target.display);
    if (state !== undefined) {
      throw new ToolInputError(
        `path ${JSON.stringify(display)} is protected (${state} is Rein's or git's own state or config, read as code later); file tools do not write it`,
      );
    }
    if (relative === ".." || relative.startsWith("../")) return;
    if (match(relative)) {
      throw new ToolInputError(
        `path ${JSON.stringify(display)} is protected (${relative} matches protectedPaths); file tools do not write it`,
      );
    }
  };
}
