/**
 * Collects a command's output with bounded memory and cuts it to a head and a tail
 * for the model.
 *
 * Invariants: memory stays bounded whatever the command prints (up to `keepBytes`
 * in memory until then; past it, everything goes to a temp file and only the first
 * and the last `keepBytes` are kept); whenever the text shown is cut, the full output
 * is in a temp file whose path the result reports.
 */

import { closeSync, openSync, writeSync } from "node:fs";
import { OutputFiles } from "./output-files.js";

export interface TruncationLimits {
  /** Lines kept from the start. */
  headLines: number;
  /** Lines kept from the end. */
  tailLines: number;
  /** Most bytes shown in all (split between head and tail in proportion to their lines). */
  maxBytes: number;
}

export interface CollectedOutput {
  /** What the model sees: all of it, or head + a note + tail. */
  text: string;
  truncated: boolean;
  /** Where the full output is, when `truncated`. */
  fullOutputPath?: string;
  totalBytes: number;
  totalLines: number;
}

const NEWLINE = 10;

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Cuts to at most `maxBytes` UTF-8 bytes from the start, never splitting a character. */
function firstBytes(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= maxBytes) return text;
  return buffer
    .subarray(0, maxBytes)
    .toString("utf8")
    .replace(/\uFFFD$/, "");
}

/** Cuts to at most `maxBytes` UTF-8 bytes from the end, never splitting a character. */
function lastBytes(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= maxBytes) return text;
  return buffer
    .subarray(buffer.length - maxBytes)
    .toString("utf8")
    .replace(/^\uFFFD/, "");
}

const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** The first lines of `lines` within both limits; a first line over the byte budget is cut. */
export function takeHead(lines: readonly string[], maxLines: number, maxBytes: number) {
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (kept.length >= maxLines) break;
    const size = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (used + size > maxBytes) {
      if (kept.length === 0) return { lines: [firstBytes(line, maxBytes)], cut: true };
      break;
    }
    kept.push(line);
    used += size;
  }
  return { lines: kept, cut: false };
}

/** The last lines of `lines` within both limits; a last line over the byte budget is cut. */
export function takeTail(lines: readonly string[], maxLines: number, maxBytes: number) {
  const kept: string[] = [];
  let used = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? "";
    if (kept.length >= maxLines) break;
    const size = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (used + size > maxBytes) {
      if (kept.length === 0) return { lines: [lastBytes(line, maxBytes)], cut: true };
      break;
    }
    kept.unshift(line);
    used += size;
  }
  return { lines: kept, cut: false };
}

/** Splits output into lines; one final newline ends the last line rather than starting an empty one. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  return lines;
}

export class OutputCollector {
  private chunks: Buffer[] = [];
  /** Once spilled: the first and the last `keepBytes`; the rest only in the file. */
  private head: Buffer | undefined;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private fd: number | undefined;
  private path: string | undefined;
  private bytes = 0;
  private newlines = 0;
  private lastByte = -1;

  constructor(
    private readonly limits: TruncationLimits,
    /** Bytes kept in memory before spilling to the temp file (and kept from each end after). */
    private readonly keepBytes = Math.max(1024 * 1024, limits.maxBytes * 2),
    private readonly files: OutputFiles = new OutputFiles(),
  ) {}

  /** Bytes written to the file so far; it stops growing at `files.maxBytes`. */
  private fileBytes = 0;

  private writeFile(fd: number, chunk: Buffer): void {
    const room = this.files.maxBytes - this.fileBytes;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    writeSync(fd, part);
    this.fileBytes += part.length;
  }

  /** Closes the file, notes a cap, applies the mask. */
  private closeFile(fd: number): void {
    if (this.fileBytes < this.bytes) {
      writeSync(
        fd,
        `\n[... output file capped at ${formatBytes(this.files.maxBytes)}; ${formatBytes(this.bytes - this.fileBytes)} not kept ...]\n`,
      );
    }
    closeSync(fd);
    if (this.path !== undefined) this.files.finish(this.path);
  }

  get totalBytes(): number {
    return this.bytes;
  }

  get totalLines(): number {
    return this.newlines + (this.bytes > 0 && this.lastByte !== NEWLINE ? 1 : 0);
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] === NEWLINE) this.newlines++;
    this.lastByte = chunk[chunk.length - 1] ?? -1;
    if (this.fd === undefined) {
      this.chunks.push(chunk);
      if (this.bytes > this.keepBytes) this.spill();
      return;
    }
    this.writeFile(this.fd, chunk);
    this.pushTail(chunk);
  }

  /** The last lines so far (within the tail limits), for live updates. */
  recent(): string {
    const source = this.fd === undefined ? this.chunks : this.tail;
    const budget = this.limits.maxBytes;
    const picked: Buffer[] = [];
    let size = 0;
    for (let i = source.length - 1; i >= 0 && size < budget + 1; i--) {
      const chunk = source[i] as Buffer;
      picked.unshift(chunk);
      size += chunk.length;
    }
    let text = Buffer.concat(picked).toString("utf8");
    const cutStart = size < this.bytes;
    if (cutStart) {
      const newline = text.indexOf("\n");
      if (newline !== -1) text = text.slice(newline + 1); // drop the partial first line
    }
    return takeTail(splitLines(text), this.limits.tailLines, budget).lines.join("\n");
  }

  /** Closes the temp file (if any) and returns what the model should see. */
  finish(): CollectedOutput {
    const totalLines = this.totalLines;
    const { headLines, tailLines, maxBytes } = this.limits;
    let headSource: string[];
    let tailSource: string[];
    if (this.fd === undefined) {
      const full = Buffer.concat(this.chunks).toString("utf8");
      const lines = splitLines(full);
      if (lines.length <= headLines + tailLines && this.bytes <= maxBytes) {
        return { text: lines.join("\n"), truncated: false, totalBytes: this.bytes, totalLines };
      }
      // Cut: keep the full output for later reading.
      this.path = this.files.newPath();
      const fd = openSync(this.path, "w", 0o600);
      this.writeFile(fd, Buffer.concat(this.chunks));
      this.closeFile(fd);
      headSource = lines;
      tailSource = lines;
    } else {
      this.closeFile(this.fd);
      this.fd = undefined;
      headSource = splitLines((this.head ?? Buffer.alloc(0)).toString("utf8"));
      let tailText = Buffer.concat(this.tail).toString("utf8");
      if (this.tailBytes < this.bytes) {
        // The tail starts mid-output: drop its partial first line.
        const newline = tailText.indexOf("\n");
        if (newline !== -1 && newline < tailText.length - 1) tailText = tailText.slice(newline + 1);
      }
      tailSource = splitLines(tailText);
    }
    const headBudget = Math.floor((maxBytes * headLines) / (headLines + tailLines));
    const head = takeHead(headSource, headLines, headBudget);
    const tail = takeTail(tailSource, tailLines, maxBytes - headBudget);
    const shownBytes = byteLength(head.lines.join("\n")) + byteLength(tail.lines.join("\n")) + 2;
    const omittedLines = Math.max(0, totalLines - head.lines.length - tail.lines.length);
    const omittedBytes = Math.max(0, this.bytes - shownBytes);
    const range =
      head.cut || tail.cut
        ? `showing the start and the end of ${totalLines} line${totalLines === 1 ? "" : "s"} (long lines cut)`
        : `showing lines 1-${head.lines.length} and ${totalLines - tail.lines.length + 1}-${totalLines} of ${totalLines}`;
    const note =
      `[... output truncated: ${omittedLines} line${omittedLines === 1 ? "" : "s"} (${formatBytes(omittedBytes)}) omitted; ` +
      `${range}. Full output (${formatBytes(this.bytes)}): ${this.path} - read it with head/tail/grep/sed ...]`;
    const text = [...head.lines, "", note, "", ...tail.lines].join("\n");
    const result: CollectedOutput = { text, truncated: true, totalBytes: this.bytes, totalLines };
    if (this.path !== undefined) result.fullOutputPath = this.path;
    return result;
  }

  /** Closes the temp file without producing output (e.g. when the spawn failed). */
  dispose(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private spill(): void {
    this.path = this.files.newPath();
    this.fd = openSync(this.path, "w", 0o600);
    const all = Buffer.concat(this.chunks);
    this.chunks = [];
    this.writeFile(this.fd, all);
    this.head = all.subarray(0, this.keepBytes);
    this.pushTail(all);
  }

  private pushTail(chunk: Buffer): void {
    this.tail.push(chunk);
    this.tailBytes += chunk.length;
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= this.keepBytes) {
      this.tailBytes -= this.tail.shift()?.length ?? 0;
    }
  }
}
