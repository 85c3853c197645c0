/**
 * The unified diff of an edit or write, shown under its tool call: the file is
 * read when the call starts and again when it ends, and `diff` (jsdiff) makes
 * the hunks. Taken from the file itself, not from the arguments, so what is
 * shown is what changed on disk, whatever the tool.
 */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { createTwoFilesPatch } from "diff";
import type { Colors } from "../ui/terminal.js";

/** Files larger than this are not diffed (the block says so). */
const MAX_BYTES = 1 << 20;

/** The file a write-risk call names (`path`, `file_path`), resolved against `cwd`. */
export function editedFile(args: unknown, cwd: string): string | undefined {
  if (typeof args !== "object" || args === null) return undefined;
  const record = args as Record<string, unknown>;
  const path = [record.path, record.file_path, record.file].find((value) => typeof value === "string");
  if (typeof path !== "string" || path === "") return undefined;
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** The file's text now; `null` when it does not exist; `undefined` when it cannot be diffed. */
export function snapshot(file: string): string | null | undefined {
  try {
    if (statSync(file).size > MAX_BYTES) return undefined;
    return readFileSync(file, "utf8");
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
}

/** The coloured unified diff from `before` to `after` (no lines: nothing changed). */
export function fileDiff(
  file: string,
  cwd: string,
  before: string | null,
  after: string | null,
  c: Colors,
): string[] {
  if (before === after) return [];
  const name = relative(cwd, file) || file;
  const patch = createTwoFilesPatch(
    before === null ? "/dev/null" : `a/${name}`,
    after === null ? "/dev/null" : `b/${name}`,
    before ?? "",
    after ?? "",
    undefined,
    undefined,
    { context: 3 },
  );
  // jsdiff starts with an "Index:"/"====" banner in some versions: start at the first header.
  const lines = patch.split("\n");
  const start = lines.findIndex((line) => line.startsWith("--- "));
  return lines
    .slice(Math.max(start, 0))
    .filter((line, i, all) => !(i === all.length - 1 && line === ""))
    .map((line) => {
      if (line.startsWith("+++") || line.startsWith("---")) return c.bold(line);
      if (line.startsWith("@@")) return c.cyan(line);
      if (line.startsWith("+")) return c.green(line);
      if (line.startsWith("-")) return c.red(line);
      return c.dim(line);
    });
}
