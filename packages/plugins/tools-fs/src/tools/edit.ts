import type { FileHandle } from "node:fs/promises";
import { defineTool, type ToolResult, Type } from "@rein/sdk";
import { openFile, writeConfined } from "../confined-open.js";
import { resolveRoot, targetOf } from "../paths.js";
import { protectedCheck } from "../protected-paths.js";
import { errorResult, guarded, looksBinary, type ResolvedFsOptions, textOf } from "../shared.js";

export interface EditDetails {
  path: string;
  /** How many occurrences were replaced. */
  replacements: number;
  /** 1-based line of the first replacement, in the old file. */
  firstChangedLine: number;
  /** A unified diff of the change (`--- a/path`, `+++ b/path`, 3 lines of context). */
  diff: string;
}

const PATHS = { path: "file" } as const;

const parameters = Type.Object({
  path: Type.String({ description: "File to edit, relative to the root (or absolute inside it)." }),
  oldText: Type.String({
    description: "Text to replace, copied exactly from the file (whitespace and indentation included).",
  }),
  newText: Type.String({ description: "Text to put in its place." }),
  replaceAll: Type.Optional(
    Type.Boolean({
      description: "Replace every occurrence instead of requiring exactly one. Default false.",
    }),
  ),
});

/** 1-based line numbers of each occurrence start. */
function occurrenceLines(text: string, needle: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
    for (let i = scanned; i < at; i++) if (text.charCodeAt(i) === 10) line++;
    scanned = at;
    lines.push(line);
  }
  return lines;
}

export function createEditTool(options: ResolvedFsOptions) {
  const refuseProtected = protectedCheck(options.protectedPaths, options.protectedFiles);
  return defineTool<typeof parameters, EditDetails>({
    name: "edit",
    label: "Edit file",
    description: [
      "Edit a file by replacing exact text: oldText must match the file exactly (whitespace and",
      "indentation included) and occur exactly once, so include enough surrounding lines to make it unique;",
      "set replaceAll to replace every occurrence instead. Read the file first.",
      "Several edits to one file are separate calls. To create a file or rewrite it whole, use write.",
    ].join(" "),
    parameters,
    paths: PATHS,
    ...(options.root === undefined ? {} : { pathRoot: options.root }),
    risk: "write",
    executionMode: "sequential",
    execute: (args, ctx) =>
      guarded<EditDetails>(
        () => args.path,
        async () => {
          const root = resolveRoot(ctx.cwd, options.root);
          const target = targetOf(ctx.facts, args, PATHS, "path", ctx.cwd, root);
          refuseProtected(target, args.path);
          if (args.oldText === "") {
            return errorResult(
              "oldText is empty; give the exact text to replace (use write to create a file)",
            );
          }
          if (args.oldText === args.newText) {
            return errorResult("oldText and newText are the same; there is nothing to change");
          }
          // Read and written through one verified descriptor: what was read is what is replaced.
          const { handle } = await openFile(root.real, target.real, "update", args.path);
          try {
            return await editOpened(handle, target.display, args, ctx.signal);
          } finally {
            await handle.close();
          }
        },
      ),
  });
}

async function editOpened(
  handle: FileHandle,
  display: string,
  args: { path: string; oldText: string; newText: string; replaceAll?: boolean },
  signal: AbortSignal,
): Promise<ToolResult<EditDetails>> {
  const target = { display };
  const info = await handle.stat();
  if (!info.isFile()) return errorResult(`path ${JSON.stringify(args.path)} is not a regular file`);
  const buffer = await handle.readFile();
  if (looksBinary(buffer)) return errorResult(`${target.display} is a binary file; edit works on text`);
  const before = buffer.toString("utf8");
  // Files with CRLF line endings: match and write with CRLF when the model used LF.
  const crlf = before.includes("\r\n") && !args.oldText.includes("\r");
  const oldText = crlf ? args.oldText.replace(/\n/g, "\r\n") : args.oldText;
  const newText = crlf ? args.newText.replace(/\n/g, "\r\n") : args.newText;

  const lines = occurrenceLines(before, oldText);
  if (lines.length === 0) {
    return errorResult(
      `oldText was not found in ${target.display}; read the file again and copy the text exactly, ` +
        "including whitespace and indentation",
    );
  }
  if (lines.length > 1 && args.replaceAll !== true) {
    return errorResult(
      `oldText occurs ${lines.length} times in ${target.display} (lines ${lines.join(", ")}); ` +
        "include more surrounding lines to make it unique, or set replaceAll to true to replace every occurrence",
    );
  }
  const after =
    args.replaceAll === true ? before.split(oldText).join(newText) : before.replace(oldText, () => newText);
  if (signal.aborted) return errorResult("aborted; the file was not changed");
  await writeConfined(handle, after);
  // diff loads with the first edit, not with every agent that has the tool.
  const { createTwoFilesPatch, FILE_HEADERS_ONLY } = await import("diff");
  const diff = createTwoFilesPatch(
    `a/${target.display}`,
    `b/${target.display}`,
    before,
    after,
    undefined,
    undefined,
    { context: 3, headerOptions: FILE_HEADERS_ONLY },
  );
  const count = lines.length;
  const where = count === 1 ? `line ${lines[0]}` : `lines ${lines.join(", ")}`;
  return {
    content: textOf(
      `Edited ${target.display}: replaced ${count} occurrence${count === 1 ? "" : "s"} (${where})`,
    ),
    details: { path: target.display, replacements: count, firstChangedLine: lines[0] ?? 1, diff },
  };
}
