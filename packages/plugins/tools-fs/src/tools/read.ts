import type { FileHandle } from "node:fs/promises";
import { defineTool, type ToolResult, Type } from "@rein/sdk";
import { openFile } from "../confined-open.js";
import { resolveRoot, ToolInputError, targetOf } from "../paths.js";
import {
  cutToBytes,
  errorResult,
  formatBytes,
  guarded,
  looksBinary,
  type ResolvedFsOptions,
  takeLinesWithin,
  textOf,
} from "../shared.js";

export interface ReadDetails {
  path: string;
  /** For text: the lines shown (1-based, inclusive) and the file's line count. */
  startLine?: number;
  endLine?: number;
  totalLines?: number;
  truncated?: boolean;
  /** For images. */
  mimeType?: string;
  bytes?: number;
}

const PATHS = { path: "file" } as const;

const parameters = Type.Object({
  path: Type.String({ description: "File to read, relative to the root (or absolute inside it)." }),
  offset: Type.Optional(
    Type.Integer({ minimum: 1, description: "First line to read (1-based). Default 1." }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, description: "How many lines to read from offset." })),
});

/** The image formats returned as image content, recognised by their first bytes. */
export function sniffImage(head: Uint8Array): string | undefined {
  const ascii = (from: number, to: number) => Buffer.from(head.subarray(from, to)).toString("latin1");
  if (head.length >= 8 && head[0] === 0x89 && ascii(1, 4) === "PNG" && head[4] === 0x0d && head[5] === 0x0a)
    return "image/png";
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (head.length >= 6 && (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a")) return "image/gif";
  if (head.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

export function createReadTool(options: ResolvedFsOptions) {
  return defineTool<typeof parameters, ReadDetails>({
    name: "read",
    label: "Read file",
    description: [
      "Read a file inside the working directory.",
      `Text comes back as-is (no line numbers), at most ${options.maxLines} lines or ${formatBytes(options.maxBytes)} per call;`,
      "a note at the end says when more remains and which offset to use next.",
      "Use offset (1-based first line) and limit (line count) to read part of a large file.",
      "PNG, JPEG, GIF and WebP files come back as images you can see.",
      "Paths are relative to the working directory; paths outside it are refused.",
    ].join(" "),
    parameters,
    paths: PATHS,
    ...(options.root === undefined ? {} : { pathRoot: options.root }),
    risk: "read",
    idempotent: true,
    execute: (args, ctx) =>
      guarded<ReadDetails>(
        () => args.path,
        async () => {
          const root = resolveRoot(ctx.cwd, options.root);
          const target = targetOf(ctx.facts, args, PATHS, "path", ctx.cwd, root);
          // Everything below reads through this one verified descriptor.
          const { handle } = await openFile(root.real, target.real, "read", args.path).catch((error) => {
            if ((error as NodeJS.ErrnoException).code === "EISDIR") {
              throw new ToolInputError(`path ${JSON.stringify(args.path)} is a directory; use ls to list it`);
            }
            throw error;
          });
          try {
            return await readOpened(handle, target.display, args, options);
          } finally {
            await handle.close();
          }
        },
      ),
  });
}

async function readOpened(
  handle: FileHandle,
  display: string,
  args: { path: string; offset?: number; limit?: number },
  options: ResolvedFsOptions,
): Promise<ToolResult<ReadDetails>> {
  const info = await handle.stat();
  if (info.isDirectory()) {
    return errorResult(`path ${JSON.stringify(args.path)} is a directory; use ls to list it`);
  }
  if (!info.isFile()) return errorResult(`path ${JSON.stringify(args.path)} is not a regular file`);
  const head = Buffer.alloc(16);
  const { bytesRead } = await handle.read(head, 0, 16, 0);
  const mimeType = sniffImage(head.subarray(0, bytesRead));
  const target = { display };
  if (mimeType) {
    if (info.size > options.maxImageBytes) {
      return errorResult(
        `image ${target.display} is ${formatBytes(info.size)}, over the ${formatBytes(options.maxImageBytes)} limit for images`,
      );
    }
    const data = (await readAll(handle)).toString("base64");
    return {
      content: [
        {
          type: "text",
          text: `Read image ${target.display} (${mimeType}, ${formatBytes(info.size)})`,
        },
        { type: "image", data, mimeType },
      ],
      details: { path: target.display, mimeType, bytes: info.size },
    };
  }
  const buffer = await readAll(handle);
  if (looksBinary(buffer)) {
    return {
      content: textOf(
        `${target.display} is a binary file (${formatBytes(buffer.length)}); its content is not shown`,
      ),
      details: { path: target.display, bytes: buffer.length },
    };
  }
  return readText(target.display, buffer.toString("utf8"), args, options);
}

/** The whole file from byte 0 (the handle's position moved while sniffing). */
async function readAll(handle: FileHandle): Promise<Buffer> {
  const { size } = await handle.stat();
  const buffer = Buffer.alloc(size);
  let done = 0;
  while (done < size) {
    const { bytesRead } = await handle.read(buffer, done, size - done, done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buffer.subarray(0, done);
}

function readText(
  display: string,
  text: string,
  args: { offset?: number; limit?: number },
  options: ResolvedFsOptions,
): ToolResult<ReadDetails> {
  const lines = text.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop(); // a final newline ends the last line
  const total = text === "" ? 0 : lines.length;
  if (total === 0) {
    return { content: textOf(`(${display} is empty)`), details: { path: display, totalLines: 0 } };
  }
  const start = args.offset ?? 1;
  if (start > total) {
    return errorResult(`offset ${start} is past the end of ${display} (${total} lines)`);
  }
  const requestedEnd = args.limit === undefined ? total : Math.min(total, start + args.limit - 1);
  const selection = lines.slice(start - 1, requestedEnd);
  const byLines = Math.min(selection.length, options.maxLines);
  const kept = takeLinesWithin(selection.slice(0, byLines), options.maxBytes);

  let body: string;
  let end: number;
  let note: string | undefined;
  if (kept === 0) {
    // The first line alone is over the byte limit: show its beginning.
    // Masked before the cut: a secret is never shown in part (invariant 7).
    const line = options.masks ? options.masks.mask(selection[0] ?? "") : (selection[0] ?? "");
    body = cutToBytes(line, options.maxBytes);
    end = start;
    note =
      `[truncated: line ${start} is ${formatBytes(Buffer.byteLength(line))}, over the ${formatBytes(options.maxBytes)} limit; ` +
      `showing its first ${formatBytes(Buffer.byteLength(body))}` +
      (end < total ? `; use offset=${end + 1} to read the lines after it]` : "]");
  } else {
    body = selection.slice(0, kept).join("\n");
    end = start + kept - 1;
    if (end < requestedEnd) {
      const limit =
        kept < byLines ? `${formatBytes(options.maxBytes)} limit` : `${options.maxLines}-line limit`;
      note = `[truncated: showing lines ${start}-${end} of ${total} (${limit}); use offset=${end + 1} to read more]`;
    } else if (end < total) {
      note = `[showing lines ${start}-${end} of ${total}; use offset=${end + 1} to read more]`;
    }
  }
  return {
    content: textOf(note ? `${body}\n\n${note}` : body),
    details: {
      path: display,
      startLine: start,
      endLine: end,
      totalLines: total,
      truncated: note?.startsWith("[truncated") === true,
    },
  };
}
