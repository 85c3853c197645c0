import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { defineTool, Type } from "@rein/sdk";

/** Keeps every path inside the working directory. */
function inside(cwd: string, path: string): string {
  const full = resolve(cwd, path);
  if (relative(cwd, full).startsWith("..")) throw new Error(`${path} is outside ${cwd}`);
  return full;
}

/** A tiny tool pack: list, read and write files in the working directory. */
export default [
  defineTool({
    name: "ls",
    description: "List the files in the working directory",
    parameters: Type.Object({}),
    risk: "read",
    execute: async (_args, ctx) => ({
      content: [
        {
          type: "text",
          text: readdirSync(ctx.cwd)
            .filter((f) => !f.startsWith("."))
            .join("\n"),
        },
      ],
    }),
  }),
  defineTool({
    name: "read",
    description: "Read a text file",
    parameters: Type.Object({ path: Type.String() }),
    risk: "read",
    execute: async (args, ctx) => ({
      content: [{ type: "text", text: readFileSync(inside(ctx.cwd, args.path), "utf8") }],
    }),
  }),
  defineTool({
    name: "write",
    description: "Write a text file",
    parameters: Type.Object({ path: Type.String(), content: Type.String() }),
    risk: "write",
    execute: async (args, ctx) => {
      writeFileSync(inside(ctx.cwd, args.path), args.content);
      return { content: [{ type: "text", text: `wrote ${join(args.path)}` }] };
    },
  }),
];
