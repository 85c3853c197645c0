import path from "node:path";
import { defineTool, pathRoot, Type } from "@rein/sdk";
import { listDirectory } from "../confined-open.js";
import { resolveRoot, targetOf } from "../paths.js";
import {
  errorResult,
  formatBytes,
  guarded,
  type ResolvedFsOptions,
  takeLinesWithin,
  textOf,
} from "../shared.js";
import { checkEntry } from "../walk.js";

export interface LsDetails {
  path: string;
  /** Entries in the directory. */
  total: number;
  /** Entries shown. */
  shown: number;
  truncated: boolean;
}

export const DEFAULT_LS_LIMIT = 500;

const PATHS = { path: "walk" } as const;

const parameters = Type.Object({
  path: Type.Optional(
    Type.String({ description: "Directory to list, relative to the root. Default: the root itself." }),
  ),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, description: `Most entries to show. Default ${DEFAULT_LS_LIMIT}.` }),
  ),
});

export function createLsTool(options: ResolvedFsOptions) {
  return defineTool<typeof parameters, LsDetails>({
    name: "ls",
    label: "List directory",
    description: [
      "List a directory inside the working directory, sorted by name, hidden entries included.",
      'Directories end with "/", symbolic links with "@".',
      `At most ${DEFAULT_LS_LIMIT} entries unless you set limit; use find to search recursively.`,
    ].join(" "),
    parameters,
    paths: PATHS,
    ...(options.root === undefined ? {} : { pathRoot: options.root }),
    risk: "read",
    idempotent: true,
    execute: (args, ctx) =>
      guarded<LsDetails>(
        () => args.path ?? ".",
        async () => {
          const root = resolveRoot(ctx.cwd, options.root);
          const target = targetOf(ctx.facts, args, PATHS, "path", ctx.cwd, root);
          const listed = await listDirectory(root.real, target.real, args.path ?? ".").catch((error) => {
            if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return undefined;
            throw error;
          });
          if (!listed) {
            return errorResult(
              `path ${JSON.stringify(args.path)} is not a directory; use read to read a file`,
            );
          }
          const scope = {
            tool: "ls",
            root: root.real,
            project: pathRoot(ctx.cwd).real,
            exclusions: options.exclusions,
          };
          // A symlink is listed (as name@) even when it leads outside; an entry a rule hides is not.
          const visible = [];
          for (const entry of listed) {
            if (!scope.exclusions || scope.exclusions.size === 0) {
              visible.push(entry);
              continue;
            }
            const checked = await checkEntry(scope, path.join(target.real, entry.name));
            if (checked !== "hidden") visible.push(entry);
          }
          const entries = visible
            .map((entry) =>
              entry.isDirectory() ? `${entry.name}/` : entry.isSymbolicLink() ? `${entry.name}@` : entry.name,
            )
            .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
          const limit = args.limit ?? DEFAULT_LS_LIMIT;
          const byCount = entries.slice(0, limit);
          const shown = takeLinesWithin(byCount, options.maxBytes);
          const lines = entries.slice(0, shown);
          if (entries.length === 0) {
            return {
              content: textOf(`(${target.display} is empty)`),
              details: { path: target.display, total: 0, shown: 0, truncated: false },
            };
          }
          let text = lines.join("\n");
          const truncated = shown < entries.length;
          if (truncated) {
            const why =
              shown < byCount.length ? `${formatBytes(options.maxBytes)} limit` : `limit ${limit} entries`;
            text += `\n\n[truncated: showing ${shown} of ${entries.length} entries (${why}); raise limit or use find with a pattern]`;
          }
          return {
            content: textOf(text),
            details: { path: target.display, total: entries.length, shown, truncated },
          };
        },
      ),
  });
}
