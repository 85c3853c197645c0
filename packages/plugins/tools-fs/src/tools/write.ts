import { defineTool, Type } from "@rein/sdk";
import { openFile, writeConfined } from "../confined-open.js";
import { resolveRoot, targetOf } from "../paths.js";
import { protectedCheck } from "../protected-paths.js";
import { errorResult, formatBytes, guarded, type ResolvedFsOptions, textOf } from "../shared.js";

export interface WriteDetails {
  path: string;
  bytes: number;
  /** Whether the file did not exist before. */
  created: boolean;
}

const PATHS = { path: "file" } as const;

const parameters = Type.Object({
  path: Type.String({ description: "File to write, relative to the root (or absolute inside it)." }),
  content: Type.String({ description: "The complete new content of the file." }),
});

export function createWriteTool(options: ResolvedFsOptions) {
  const refuseProtected = protectedCheck(options.protectedPaths, options.protectedFiles);
  return defineTool<typeof parameters, WriteDetails>({
    name: "write",
    label: "Write file",
    description: [
      "Write a file inside the working directory, replacing it completely if it exists;",
      "missing parent directories are created.",
      "Give the whole content. To change part of an existing file, prefer edit (read the file first).",
      "Paths outside the working directory are refused.",
    ].join(" "),
    parameters,
    paths: PATHS,
    ...(options.root === undefined ? {} : { pathRoot: options.root }),
    risk: "write",
    executionMode: "sequential",
    idempotent: true,
    execute: (args, ctx) =>
      guarded<WriteDetails>(
        () => args.path,
        async () => {
          const root = resolveRoot(ctx.cwd, options.root);
          const target = targetOf(ctx.facts, args, PATHS, "path", ctx.cwd, root);
          refuseProtected(target, args.path);
          if (target.display === ".") return errorResult(`path ${JSON.stringify(args.path)} is a directory`);
          if (ctx.signal.aborted) return errorResult("aborted; nothing was written");
          // Created inside a verified directory descriptor; written through the verified file descriptor.
          const { handle, created } = await openFile(root.real, target.real, "write", args.path);
          try {
            await writeConfined(handle, args.content);
          } finally {
            await handle.close();
          }
          const bytes = Buffer.byteLength(args.content, "utf8");
          return {
            content: textOf(`${created ? "Created" : "Wrote"} ${target.display} (${formatBytes(bytes)})`),
            details: { path: target.display, bytes, created },
          };
        },
      ),
  });
}
