/**
 * Recursive file listing for find and grep, through tinyglobby (a small, maintained
 * glob walker built on fdir + picomatch).
 *
 * Invariant: nothing outside the root is listed. The pattern is checked up front
 * (no absolute paths, no `..` segment), and because brace expansion and globstars
 * can still reach out (`..{,}/**`), every result is checked again: its lexical path
 * must stay below the walk directory and its real path (symlinks resolved) below
 * the root. Symbolic links to directories are not descended. Entries a path rule
 * hides (`walkExclusions`) are left out under either spelling (as walked, as real).
 */
import { realpath } from "node:fs/promises";
import path from "node:path";
import type { WalkExclusions } from "@rein/sdk";
import { glob } from "tinyglobby";
import { isInside, ToolInputError, toDisplay } from "./paths.js";
import { SKIPPED_DIRS } from "./shared.js";

/**
 * Normalizes a glob for the walk: a pattern without "/" matches file names at any
 * depth ("*.ts" = "**\/*.ts"); a leading "./" is dropped.
 */
export function normalizePattern(pattern: string): string {
  let p = pattern.trim();
  if (p === "") throw new ToolInputError("the glob pattern is empty");
  if (p.startsWith("/") || /^[A-Za-z]:[\\/]/.test(p)) {
    throw new ToolInputError(
      `glob ${JSON.stringify(pattern)} is absolute; give a pattern relative to the search directory (set path to choose the directory)`,
    );
  }
  if (p.split(/[/{},]/).includes("..")) {
    throw new ToolInputError(
      `glob ${JSON.stringify(pattern)} may not contain ".."; set path to choose the directory to search`,
    );
  }
  while (p.startsWith("./")) p = p.slice(2);
  return p.includes("/") ? p : `**/${p}`;
}

/** Where a walk runs and what it must respect. */
export interface WalkScope {
  /** The walking tool's name (exclusions may depend on it). */
  tool: string;
  /** Real root of the tool: nothing outside it is listed. */
  root: string;
  /** Real project root (the working directory): entries are named relative to it for exclusions. */
  project: string;
  exclusions: WalkExclusions | undefined;
}

/** A listed file: relative to the walk directory (as walked) and its real path. */
export interface WalkedFile {
  rel: string;
  real: string;
}

/** Checks one entry of a walk (see the module invariant); `hidden` when a rule hides it, `outside` when it leads out. */
export async function checkEntry(
  scope: WalkScope,
  lexical: string,
): Promise<{ real: string } | "outside" | "hidden"> {
  let real: string;
  try {
    real = await realpath(lexical);
  } catch {
    return "outside"; // vanished or dangling: nothing to show
  }
  if (!isInside(scope.root, real) || !isInside(scope.root, lexical)) return "outside";
  if (scope.exclusions && scope.exclusions.size > 0) {
    const why = scope.exclusions.excluded({
      tool: scope.tool,
      walked: lexical,
      relative: toDisplay(path.relative(scope.project, lexical)),
      realRelative: toDisplay(path.relative(scope.project, real)),
      absolute: real,
      root: scope.root,
    });
    if (why !== undefined) return "hidden";
  }
  return { real };
}

/** Files under `dir` (a real directory path inside the root) matching `pattern`, sorted, checked. */
export async function listFiles(
  scope: WalkScope,
  dir: string,
  pattern: string,
  signal?: AbortSignal,
): Promise<{ files: WalkedFile[]; hidden: number }> {
  const found = await glob([normalizePattern(pattern)], {
    cwd: dir,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    expandDirectories: false,
    ignore: SKIPPED_DIRS.map((name) => `**/${name}/**`),
    ...(signal ? { signal } : {}),
  });
  const files: WalkedFile[] = [];
  let hidden = 0;
  for (const rel of found.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
    const lexical = path.resolve(dir, rel);
    if (path.isAbsolute(rel) || !isInside(dir, lexical)) continue;
    const checked = await checkEntry(scope, lexical);
    if (checked === "outside") continue;
    if (checked === "hidden") {
      hidden++;
      continue;
    }
    files.push({ rel: toDisplay(path.relative(dir, lexical)), real: checked.real });
  }
  return { files, hidden };
}
