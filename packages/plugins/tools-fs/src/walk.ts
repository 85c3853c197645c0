/**
 * Recursive file listing for find and grep, through tinyglobby (a small, maintained
 * glob walker built on fdir + picomatch).
 *
 * Invariant: the walk never leaves the directory it starts in: patterns with `..`
 * or an absolute path are refused, and symbolic links to directories are not
 * descended (a link could point anywhere). `.git` and `node_modules` are skipped.
 */
import { glob } from "tinyglobby";
import { ToolInputError } from "./paths.js";
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
  if (p.split("/").includes("..")) {
    throw new ToolInputError(
      `glob ${JSON.stringify(pattern)} may not contain ".."; set path to choose the directory to search`,
    );
  }
  while (p.startsWith("./")) p = p.slice(2);
  return p.includes("/") ? p : `**/${p}`;
}

/** Files under `dir` (a real directory path) matching `pattern`, relative to `dir`, sorted. */
export async function listFiles(dir: string, pattern: string, signal?: AbortSignal): Promise<string[]> {
  const files = await glob([normalizePattern(pattern)], {
    cwd: dir,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    expandDirectories: false,
    ignore: SKIPPED_DIRS.map((name) => `**/${name}/**`),
    ...(signal ? { signal } : {}),
  });
  return files.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
