import { mkdir, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { defineTool, Type } from "@rein/sdk";
import { resolveInRoot, resolveRoot } from "../paths.js";
import { errorResult, formatBytes, guarded, type ResolvedFsOptions, textOf } from "../shared.js";

export interface WriteDetails {
  path: string;
  bytes: number;
  /** Whether the file did not exist before. */
  created: boolean;
}

const parameters = Type.Object({
  path: Type.String({ description: "File to write, relative to the root (or absolute inside it)." }),
  content: Type.String({ description: "The complete new content of the file." }),
});

export function createWriteTool(options: ResolvedFsOptions) {
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
    risk: "write",
    executionMode: "sequential",
    idempotent: true,
    execute: (args, ctx) =>
      guarded<WriteDetails>(
        () => args.path,
        async () => {
          const root = resolveRoot(ctx.cwd, options.root);
          const target = resolveInRoot(root, args.path);
          let created = true;
          try {
            const info = await stat(target.real);
            if (info.isDirectory()) return errorResult(`path ${JSON.stringify(args.path)} is a directory`);
            created = false;
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
          }
          if (ctx.signal.aborted) return errorResult("aborted; nothing was written");
          await mkdir(dirname(target.real), { recursive: true });
          await writeFile(target.real, args.content, "utf8");
          const bytes = Buffer.byteLength(args.content, "utf8");
          return {
            content: textOf(`${created ? "Created" : "Wrote"} ${target.display} (${formatBytes(bytes)})`),
            details: { path: target.display, bytes, created },
          };
        },
      ),
  });
}
