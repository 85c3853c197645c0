import { realpathSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { join as joinPath } from "node:path";
import { defineTool, Type } from "@rein/sdk";
import { isInside, resolveInRoot, resolveRoot } from "../paths.js";
import {
  errorResult,
  formatBytes,
  guarded,
  looksBinary,
  type ResolvedFsOptions,
  takeLinesWithin,
  textOf,
} from "../shared.js";
import { listFiles } from "../walk.js";

export interface GrepDetails {
  pattern: string;
  path: string;
  /** Matching lines shown (at most `limit`). */
  matches: number;
  /** Files with at least one match shown. */
  files: number;
  /** Whether the match limit or the byte limit cut the output. */
  truncated: boolean;
  /** Files not searched: binary, too large, or a symbolic link leading outside the root. */
  skipped: number;
}

export const DEFAULT_GREP_LIMIT = 100;
/** Files larger than this are skipped (search them with a narrower tool). */
export const MAX_GREP_FILE_BYTES = 10 * 1024 * 1024;
/** Longest line shown in grep output; longer ones are cut. */
export const MAX_GREP_LINE_CHARS = 500;

const parameters = Type.Object({
  pattern: Type.String({
    description: "A JavaScript regular expression (or plain text with literal: true).",
  }),
  path: Type.Optional(
    Type.String({ description: "File or directory to search, relative to the root. Default: the root." }),
  ),
  glob: Type.Optional(
    Type.String({ description: 'Only search files matching this glob, e.g. "*.ts" or "src/**/*.md".' }),
  ),
  ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive match. Default false." })),
  literal: Type.Optional(
    Type.Boolean({ description: "Treat pattern as plain text, not a regular expression. Default false." }),
  ),
  context: Type.Optional(
    Type.Integer({ minimum: 0, description: "Lines of context before and after each match. Default 0." }),
  ),
  before: Type.Optional(
    Type.Integer({ minimum: 0, description: "Lines of context before (overrides context)." }),
  ),
  after: Type.Optional(
    Type.Integer({ minimum: 0, description: "Lines of context after (overrides context)." }),
  ),
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `Most matching lines to return. Default ${DEFAULT_GREP_LIMIT}.`,
    }),
  ),
});

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

const cutLine = (line: string) =>
  line.length > MAX_GREP_LINE_CHARS ? `${line.slice(0, MAX_GREP_LINE_CHARS)}... [line cut]` : line;

/** Output lines for one file: matches as `path:n:text`, context as `path-n-text`, groups split by `--`. */
function formatFile(
  display: string,
  lines: readonly string[],
  matchIndexes: readonly number[],
  before: number,
  after: number,
): string[] {
  const out: string[] = [];
  const isMatch = new Set(matchIndexes);
  let printedUpTo = -1; // last line index printed
  for (const index of matchIndexes) {
    const from = Math.max(0, index - before, printedUpTo + 1);
    const to = Math.min(lines.length - 1, index + after);
    if (from > printedUpTo + 1 && printedUpTo >= 0) out.push("--");
    for (let i = from; i <= to; i++) {
      if (i <= printedUpTo) continue;
      const separator = isMatch.has(i) ? ":" : "-";
      out.push(`${display}${separator}${i + 1}${separator}${cutLine(lines[i] ?? "")}`);
      printedUpTo = i;
    }
  }
  return out;
}

export function createGrepTool(options: ResolvedFsOptions) {
  return defineTool<typeof parameters, GrepDetails>({
    name: "grep",
    label: "Search file contents",
    description: [
      "Search file contents inside the working directory with a JavaScript regular expression",
      "(set literal for plain text, ignoreCase for case-insensitive).",
      "Searches one file or a directory recursively (hidden files included; .git, node_modules and binary files skipped);",
      "narrow it with glob. Output lines look like path:line:text for matches and path-line-text for",
      'context lines (set context, or before/after), with "--" between separate groups.',
      `At most ${DEFAULT_GREP_LIMIT} matching lines unless you set limit. Use find to search file names.`,
    ].join(" "),
    parameters,
    risk: "read",
    idempotent: true,
    execute: (args, ctx) =>
      guarded<GrepDetails>(
        () => args.path ?? ".",
        async () => {
          let regex: RegExp;
          try {
            regex = new RegExp(
              args.literal ? escapeRegExp(args.pattern) : args.pattern,
              args.ignoreCase ? "i" : "",
            );
          } catch (error) {
            return errorResult(
              `invalid regular expression ${JSON.stringify(args.pattern)}: ${(error as Error).message}; ` +
                "fix it, or set literal to true to search for the text as-is",
            );
          }
          const root = resolveRoot(ctx.cwd, options.root);
          const target = resolveInRoot(root, args.path ?? ".");
          const before = args.before ?? args.context ?? 0;
          const after = args.after ?? args.context ?? 0;
          const limit = args.limit ?? DEFAULT_GREP_LIMIT;

          const info = await stat(target.real);
          const files: { real: string; display: string }[] = info.isDirectory()
            ? (await listFiles(target.real, args.glob ?? "*", ctx.signal)).map((rel) => ({
                real: joinPath(target.real, rel),
                display: target.display === "." ? rel : `${target.display}/${rel}`,
              }))
            : [{ real: target.real, display: target.display }];

          const out: string[] = [];
          let matches = 0;
          let matchedFiles = 0;
          let skipped = 0;
          let hitLimit = false;
          for (const file of files) {
            if (ctx.signal.aborted) return errorResult("aborted");
            // A symbolic link inside the root may lead outside it: never read through one.
            let real: string;
            try {
              real = realpathSync(file.real);
            } catch {
              skipped++;
              continue;
            }
            if (!isInside(root.real, real)) {
              skipped++;
              continue;
            }
            const fileInfo = await stat(real);
            if (!fileInfo.isFile() || fileInfo.size > MAX_GREP_FILE_BYTES) {
              skipped++;
              continue;
            }
            const buffer = await readFile(real);
            if (looksBinary(buffer)) {
              skipped++;
              continue;
            }
            const lines = buffer.toString("utf8").split("\n");
            if (lines.length > 1 && lines.at(-1) === "") lines.pop();
            for (let i = 0; i < lines.length; i++) lines[i] = (lines[i] ?? "").replace(/\r$/, "");
            const found: number[] = [];
            for (let i = 0; i < lines.length && matches < limit; i++) {
              if (regex.test(lines[i] ?? "")) {
                found.push(i);
                matches++;
              }
            }
            if (found.length > 0) {
              matchedFiles++;
              if (out.length > 0 && (before > 0 || after > 0)) out.push("--");
              out.push(...formatFile(file.display, lines, found, before, after));
            }
            if (matches >= limit) {
              // Stopped at the limit: was there anything more to find?
              hitLimit = true;
              break;
            }
          }

          const details = { pattern: args.pattern, path: target.display, skipped };
          if (matches === 0) {
            return {
              content: textOf(`No matches for ${JSON.stringify(args.pattern)} in ${target.display}`),
              details: { ...details, matches: 0, files: 0, truncated: false },
            };
          }
          const keptLines = takeLinesWithin(out, options.maxBytes);
          let text = out.slice(0, keptLines).join("\n");
          const notes: string[] = [];
          if (hitLimit) {
            notes.push(
              `[truncated: stopped at the limit of ${limit} matching lines; there may be more: narrow the pattern, path or glob, or raise limit]`,
            );
          }
          if (keptLines < out.length) {
            notes.push(
              `[truncated: output cut at the ${formatBytes(options.maxBytes)} limit after ${keptLines} of ${out.length} lines; narrow the search]`,
            );
          }
          if (notes.length > 0) text += `\n\n${notes.join("\n")}`;
          return {
            content: textOf(text),
            details: { ...details, matches, files: matchedFiles, truncated: notes.length > 0 },
          };
        },
      ),
  });
}
