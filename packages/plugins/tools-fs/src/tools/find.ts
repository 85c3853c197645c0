import { defineTool, pathRoot, Type } from "@rein/sdk";
import { openDirectory } from "../confined-open.js";
import { resolveRoot, targetOf } from "../paths.js";
import {
  errorResult,
  formatBytes,
  guarded,
  type ResolvedFsOptions,
  takeLinesWithin,
  textOf,
} from "../shared.js";
import { listFiles } from "../walk.js";

export interface FindDetails {
  pattern: string;
  path: string;
  /** Files that matched. */
  total: number;
  /** Files shown. */
  shown: number;
  truncated: boolean;
}

export const DEFAULT_FIND_LIMIT = 1000;

const PATHS = { path: "walk" } as const;

const parameters = Type.Object({
  pattern: Type.String({
    description: 'Glob, e.g. "*.ts" (a name at any depth), "src/**/*.test.ts", "**/{package,tsconfig}.json".',
  }),
  path: Type.Optional(
    Type.String({ description: "Directory to search in, relative to the root. Default: the root." }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: `Most files to return. Default ${DEFAULT_FIND_LIMIT}.` }),
  ),
});

const join = (dir: string, rel: string) => (dir === "." ? rel : `${dir}/${rel}`);

export function createFindTool(options: ResolvedFsOptions) {
  return defineTool<typeof parameters, FindDetails>({
    name: "find",
    label: "Find files",
    description: [
      "Find files by glob pattern inside the working directory (recursive; hidden files included;",
      ".git and node_modules skipped; symbolic links to directories not followed).",
      'A pattern without "/" matches file names at any depth: "*.md" finds every Markdown file.',
      "Paths come back relative to the working directory, sorted;",
      `at most ${DEFAULT_FIND_LIMIT} unless you set limit. Use grep to search file contents.`,
    ].join(" "),
    parameters,
    paths: PATHS,
    ...(options.root === undefined ? {} : { pathRoot: options.root }),
    risk: "read",
    idempotent: true,
    execute: (args, ctx) =>
      guarded<FindDetails>(
        () => args.path ?? ".",
        async () => {
          const root = resolveRoot(ctx.cwd, options.root);
          const target = targetOf(ctx.facts, args, PATHS, "path", ctx.cwd, root);
          const dir = await openDirectory(root.real, target.real, args.path ?? ".").catch((error) => {
            if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
            throw error;
          });
          if (!dir) return errorResult(`path ${JSON.stringify(args.path)} is not a directory`);
          await dir.close();
          const scope = {
            tool: "find",
            root: root.real,
            project: pathRoot(ctx.cwd).real,
            exclusions: options.exclusions,
          };
          const files = (await listFiles(scope, target.real, args.pattern, ctx.signal)).files.map((file) =>
            join(target.display, file.rel),
          );
          const details = { pattern: args.pattern, path: target.display, total: files.length };
          if (files.length === 0) {
            return {
              content: textOf(`No files match ${JSON.stringify(args.pattern)} in ${target.display}`),
              details: { ...details, shown: 0, truncated: false },
            };
          }
          const limit = args.limit ?? DEFAULT_FIND_LIMIT;
          const byCount = files.slice(0, limit);
          const shown = takeLinesWithin(byCount, options.maxBytes);
          let text = files.slice(0, shown).join("\n");
          const truncated = shown < files.length;
          if (truncated) {
            const why =
              shown < byCount.length ? `${formatBytes(options.maxBytes)} limit` : `limit ${limit} results`;
            text += `\n\n[truncated: showing ${shown} of ${files.length} files (${why}); narrow the pattern or path, or raise limit]`;
          }
          return { content: textOf(text), details: { ...details, shown, truncated } };
        },
      ),
  });
}
