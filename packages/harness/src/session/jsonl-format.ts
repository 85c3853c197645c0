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

/** Parses and validates a whole session file (see the torn-tail rule above). */
export function parseSessionFile(file: string, bytes: Buffer): ParsedFile {
  const fail = (line: number, problem: string) =>
    sessionError(`invalid session file ${file} line ${line}: ${problem}`, { file });
  const headerEnd = bytes.indexOf(NEWLINE);
  if (headerEnd === -1) {
    throw fail(
      1,
      bytes.length === 0 ? "the file is empty; expected a session header" : "the header line is incomplete",
    );
  }
  let header: unknown;
  try {
    header = JSON.parse(bytes.toString("utf8", 0, headerEnd));
  } catch (error) {
    throw fail(1, `expected a JSON session header (${(error as Error).message})`);
  }
  const headerIssue = headerProblem(header);
  if (headerIssue !== undefined) throw fail(1, headerIssue);

  const entries: StoredEntry[] = [];
  const byId = new Map<string, StoredEntry>();
  const lookup = (id: string) => byId.get(id);
  let group: OpenGroup | undefined;
  let start = headerEnd + 1;
  const tornTail = (line: number): ParsedFile => {
    const parsed = { header: header as SessionHeader, entries };
    if (group === undefined) return { ...parsed, goodSize: start, torn: { line, what: "a torn last line" } };
    // The unfinished group goes as a whole: none of its entries was committed.
    const what = `a torn write group (${group.seen} of ${group.of} lines complete)`;
    return { ...parsed, goodSize: group.startByte, torn: { line: group.startLine, what } };
  };
  let lineNumber = 1;
  while (start < bytes.length) {
    lineNumber++;
    const end = bytes.indexOf(NEWLINE, start);
    if (end === -1) return tornTail(lineNumber);
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString("utf8", start, end));
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
        startByte: start,
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
    const problem = entryProblem(value, lookup);
    if (problem !== undefined) throw fail(lineNumber, problem);
    const entry = value as StoredEntry;
    byId.set(entry.id, entry);
    if (group === undefined) entries.push(entry);
    else {
      group.entries.push(entry);
      group.seen++;
      if (group.seen === group.of) {
        entries.push(...group.entries);
        group = undefined;
      }
    }
    start = end + 1;
  }
  if (group !== undefined) return tornTail(group.startLine);
  return { header: header as SessionHeader, entries, goodSize: start };
}
