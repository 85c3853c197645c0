import { defineTool, pathRoot, Type } from "@rein/sdk";
import { openDirectory, readConfined } from "../confined-open.js";
import { resolveRoot, ToolInputError, targetOf } from "../paths.js";
import {
  errorResult,
  formatBytes,
  guarded,
  looksBinary,
  type ResolvedFsOptions,
  takeLinesWithin,
  textOf,
} from "../shared.js";
import { checkEntry, listFiles, type WalkScope } from "../walk.js";

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

const PATHS = { path: "walk" } as const;

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

/** Masks first (invariant 7: a secret is never cut in two before redaction sees it), then cuts. */
const cutLine = (line: string, mask: (text: string) => string) => {
  const masked = mask(line);
  return masked.length > MAX_GREP_LINE_CHARS
    ? `${masked.slice(0, MAX_GREP_LINE_CHARS)}... [line cut]`
    : masked;
};

/** Output lines for one file: matches as `path:n:text`, context as `path-n-text`, groups split by `--`. */
function formatFile(
  display: string,
  lines: readonly string[],
  matchIndexes: readonly number[],
  before: number,
  after: number,
  mask: (text: string) => string,
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
      out.push(`${display}${separator}${i + 1}${separator}${cutLine(lines[i] ?? "", mask)}`);
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
    paths: PATHS,
    ...(options.root === undefined ? {} : { pathRoot: options.root }),
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
          const target = targetOf(ctx.facts, args, PATHS, "path", ctx.cwd, root);
          const before = args.before ?? args.context ?? 0;
          const after = args.after ?? args.context ?? 0;
          const limit = args.limit ?? DEFAULT_GREP_LIMIT;
          const mask = options.masks ? (text: string) => options.masks?.mask(text) ?? text : (t: string) => t;
          const scope: WalkScope = {
            tool: "grep",
            root: root.real,
            project: pathRoot(ctx.cwd).real,
            exclusions: options.exclusions,
          };

          const isDir = await openDirectory(root.real, target.real, args.path ?? ".").then(
            async (dir) => {
              await dir.close();
              return true;
            },
            (error: NodeJS.ErrnoException) => {
              if (error.code === "ENOTDIR") return false;
              throw error;
            },
          );
          let files: { real: string; display: string }[];
          if (isDir) {
            files = (await listFiles(scope, target.real, args.glob ?? "*", ctx.signal)).files.map((file) => ({
              real: file.real,
              display: target.display === "." ? file.rel : `${target.display}/${file.rel}`,
            }));
          } else {
            // A single file named directly: the gate decided on it; a walk rule still hides it.
            if ((await checkEntry(scope, target.real)) === "hidden") {
              throw new ToolInputError(`path ${JSON.stringify(args.path)} is hidden by a path rule`);
            }
            files = [{ real: target.real, display: target.display }];
          }

          const out: string[] = [];
          let matches = 0;
          let matchedFiles = 0;
          let skipped = 0;
          let hitLimit = false;
          for (const file of files) {
            if (ctx.signal.aborted) return errorResult("aborted");
            // Read through a verified descriptor: a file swapped for a link meanwhile is skipped, never followed out.
            let buffer: Buffer | undefined;
            try {
              buffer = (await readConfined(root.real, file.real, file.display, MAX_GREP_FILE_BYTES)).buffer;
            } catch {
              skipped++;
              continue;
            }
            if (!buffer || looksBinary(buffer)) {
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
              out.push(...formatFile(file.display, lines, found, before, after, mask));
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
