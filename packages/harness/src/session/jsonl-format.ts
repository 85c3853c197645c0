/**
 * The JSONL session format: line 1 the header, then one entry per line, each line
 * ending in `\n`. Several entries that must land together (a leaf move with its branch
 * summary) are a *write group*: consecutive lines, written by one write, each carrying
 * `"writeGroup": { "id", "line", "of" }` (`line` counts from 1).
 *
 * Invariant (the torn-tail rule): only what one interrupted write can leave is a torn
 * tail, and only at the end of the file - a last line without its `\n`, or the whole
 * lines of a write group whose last line never came. Either is cut off (reported, not
 * fatal). Anything else that is wrong - a line that is not JSON, an invalid entry, a
 * write group broken in the middle - is corruption and refuses the file with a
 * `session` error naming file and line, even on the last line.
 */
import { sessionError } from "../errors.js";
import { shortId } from "../ids.js";
import type { SessionHeader, StoredEntry } from "./entries.js";
import { isObject, show } from "./message-checks.js";
import { entryProblem, headerProblem } from "./validation.js";

const NEWLINE = 0x0a;

/** The field that marks a line as part of a write group. Reserved: entries never carry it. */
export const WRITE_GROUP_FIELD = "writeGroup";

export interface ParsedFile {
  header: SessionHeader;
  entries: StoredEntry[];
  /** Every entry of `entries` by id: the index validation built, handed on so nobody builds it twice. */
  byId: Map<string, StoredEntry>;
  /** Bytes up to the end of the last whole, valid line outside an unfinished group. */
  goodSize: number;
  /** What was cut off as a torn tail, if anything. */
  torn?: { line: number; what: string };
}

/** The bytes of `entries` as lines; more than one become one write group. */
export function encodeEntries(entries: readonly StoredEntry[]): string {
  if (entries.length === 1) return `${JSON.stringify(entries[0])}\n`;
  const id = shortId();
  const of = entries.length;
  return entries
    .map(
      (entry, index) => `${JSON.stringify({ ...entry, [WRITE_GROUP_FIELD]: { id, line: index + 1, of } })}\n`,
    )
    .join("");
}

interface OpenGroup {
  id: string;
  of: number;
  seen: number;
  startLine: number;
  startByte: number;
  entries: StoredEntry[];
}

/**
 * Reads bytes like `fs.readSync(fd, buffer, offset, length, position)`: fills
 * `buffer` from `offset` with at most `length` bytes of the file at `position`
 * and returns how many it read (0 at the end of the file).
 */
export type ChunkReader = (buffer: Buffer, offset: number, length: number, position: number) => number;

/** Bytes read at a time; a line longer than this grows the buffer. */
const CHUNK_BYTES = 1 << 20;
/**
 * Whole lines are decoded about this many bytes at a time: a string this size (even
 * two bytes a character) stays below V8's large-object size, so it is young garbage
 * that dies cheaply instead of old-space growth that brings on full collections.
 */
const DECODE_BYTES = 1 << 15;

/**
 * Parses and validates a whole session file (see the torn-tail rule above).
 * The file is read in chunks of about 1 MiB, whose whole lines are decoded in
 * pieces of about 32 KiB with one `toString` and split each, so neither the whole
 * file nor a string per line of bytes is ever held (peak memory is the entries
 * plus one chunk).
 */
export function parseSessionFile(file: string, read: ChunkReader): ParsedFile {
  const fail = (line: number, problem: string) =>
    sessionError(`invalid session file ${file} line ${line}: ${problem}`, { file });
  let header: SessionHeader | undefined;
  const entries: StoredEntry[] = [];
  const byId = new Map<string, StoredEntry>();
  // Each line costs one hash probe: its entry is indexed before the checks run, a
  // duplicate id told by the index not growing (`taken`: what the checks then see under
  // that id), and the parent, nearly always the line before, is found without one.
  let previous: StoredEntry | undefined;
  let ownId: unknown;
  let taken: StoredEntry | undefined;
  const lookup = (id: string) =>
    id === ownId ? taken : previous !== undefined && previous.id === id ? previous : byId.get(id);
  let group: OpenGroup | undefined;
  let lineNumber = 0;

  /**
   * One whole line, `lines[index]` (without its newline) of the chunk that starts at
   * file offset `chunkStart`; the line's own offset is computed only for a group's first line.
   */
  const parseLine = (lines: readonly string[], index: number, chunkStart: number): void => {
    const text = lines[index] as string;
    lineNumber++;
    if (header === undefined) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (error) {
        throw fail(1, `expected a JSON session header (${(error as Error).message})`);
      }
      const headerIssue = headerProblem(value);
      if (headerIssue !== undefined) throw fail(1, headerIssue);
      header = value as SessionHeader;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      // A whole line (its newline written) that is not JSON no single append produces.
      throw fail(lineNumber, `expected one JSON entry per line (${(error as Error).message})`);
    }
    const marker = isObject(value) ? value[WRITE_GROUP_FIELD] : undefined;
    if (marker !== undefined) {
      if (
        !isObject(marker) ||
        typeof marker.id !== "string" ||
        !Number.isInteger(marker.of) ||
        (marker.of as number) < 2
      ) {
        throw fail(
          lineNumber,
          `expected "${WRITE_GROUP_FIELD}" to be { id: string, line: integer, of: integer >= 2 }, got ${show(marker)}`,
        );
      }
      group ??= {
        id: marker.id,
        of: marker.of as number,
        seen: 0,
        startLine: lineNumber,
        startByte: chunkStart + bytesBefore(lines, index),
        entries: [],
      };
      if (group.id !== marker.id || group.of !== marker.of || marker.line !== group.seen + 1) {
        throw fail(
          lineNumber,
          `expected line ${group.seen + 1} of ${group.of} of write group ${group.id} (from line ${group.startLine}), got ${show(marker)}`,
        );
      }
      delete (value as Record<string, unknown>)[WRITE_GROUP_FIELD];
    } else if (group !== undefined) {
      throw fail(
        lineNumber,
        `expected line ${group.seen + 1} of ${group.of} of write group ${group.id} (from line ${group.startLine}), got a line outside it`,
      );
    }
    ownId = isObject(value) ? value.id : undefined;
    taken = undefined;
    if (typeof ownId === "string") {
      const size = byId.size;
      byId.set(ownId, value as StoredEntry); // a line that fails its checks throws, index and all
      if (byId.size === size) taken = value as StoredEntry;
    }
    const problem = entryProblem(value, lookup);
    if (problem !== undefined) throw fail(lineNumber, problem);
    const entry = value as StoredEntry;
    previous = entry;
    if (group === undefined) entries.push(entry);
    else {
      group.entries.push(entry);
      group.seen++;
      if (group.seen === group.of) {
        for (const grouped of group.entries) entries.push(grouped);
        group = undefined;
      }
    }
  };

  let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  let filled = 0; // bytes held in `buffer`
  let position = 0; // the file offset of buffer[0]: always the start of a line
  for (;;) {
    if (filled === buffer.length) {
      // One line longer than the buffer: grow it (rare; a huge tool result).
      const bigger = Buffer.allocUnsafe(buffer.length * 2);
      buffer.copy(bigger, 0, 0, filled);
      buffer = bigger;
    }
    const count = read(buffer, filled, buffer.length - filled, position + filled);
    filled += count;
    // (A negative offset would count from the end of the buffer, over stale bytes.)
    const last = filled === 0 ? -1 : buffer.lastIndexOf(NEWLINE, filled - 1);
    if (last !== -1) {
      for (let start = 0; start <= last; ) {
        let end = last;
        if (last - start > DECODE_BYTES) {
          end = buffer.lastIndexOf(NEWLINE, start + DECODE_BYTES);
          if (end < start) end = buffer.indexOf(NEWLINE, start + DECODE_BYTES); // one long line
        }
        const lines = buffer.toString("utf8", start, end).split("\n");
        for (let index = 0; index < lines.length; index++) parseLine(lines, index, position + start);
        start = end + 1;
      }
      position += last + 1;
      buffer.copy(buffer, 0, last + 1, filled);
      filled -= last + 1;
    }
    if (count === 0) break;
  }
  if (header === undefined) {
    throw fail(
      1,
      filled === 0 ? "the file is empty; expected a session header" : "the header line is incomplete",
    );
  }
  const parsed = { header, entries, byId };
  // The unfinished group goes as a whole: none of its entries was committed.
  if (group !== undefined) {
    for (const entry of group.entries) byId.delete(entry.id);
    const what = `a torn write group (${group.seen} of ${group.of} lines complete)`;
    return { ...parsed, goodSize: group.startByte, torn: { line: group.startLine, what } };
  }
  if (filled > 0)
    return { ...parsed, goodSize: position, torn: { line: lineNumber + 1, what: "a torn last line" } };
  return { ...parsed, goodSize: position };
}

/** Bytes of `lines[0..index)`, each with its newline. */
function bytesBefore(lines: readonly string[], index: number): number {
  let bytes = 0;
  for (let i = 0; i < index; i++) bytes += Buffer.byteLength(lines[i] as string, "utf8") + 1;
  return bytes;
}
