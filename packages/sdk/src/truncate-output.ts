/**
 * `truncateOutput`: cuts a tool's text output to what a model should read, keeping
 * the head, and says what was cut. Invariant: the kept text is a prefix of the
 * input made of whole lines (a single over-long line is cut at a character
 * boundary, never inside a UTF-8 sequence), within both limits; `note` is
 * undefined exactly when nothing was cut.
 */

export interface TruncateOptions {
  /** Most UTF-8 bytes to keep. Default 50 000. */
  maxBytes?: number;
  /** Most lines to keep. Default 2 000. */
  maxLines?: number;
  /** Where the full output was kept, to name in the note (e.g. a file path). */
  fullOutputAt?: string;
}

export interface TruncatedOutput {
  /** The kept text. */
  text: string;
  truncated: boolean;
  /** E.g. `[output truncated: kept 2000 of 8123 lines (49.1 of 310.2 KB); full output in /tmp/x]`. */
  note: string | undefined;
  /** Lines and bytes of the whole input. */
  totalLines: number;
  totalBytes: number;
}

const size = (bytes: number) => (bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} KB`);

export function truncateOutput(text: string, options: TruncateOptions = {}): TruncatedOutput {
  const maxBytes = options.maxBytes ?? 50_000;
  const maxLines = options.maxLines ?? 2_000;
  if (!(maxBytes >= 0) || !(maxLines >= 0)) throw new RangeError("truncateOutput: limits must be >= 0");
  const lines = text.split("\n");
  const totalBytes = Buffer.byteLength(text, "utf8");
  const totalLines = text === "" ? 0 : text.endsWith("\n") ? lines.length - 1 : lines.length;
  if (totalBytes <= maxBytes && totalLines <= maxLines) {
    return { text, truncated: false, note: undefined, totalLines, totalBytes };
  }
  let kept = "";
  let keptBytes = 0;
  let keptLines = 0;
  for (const [index, line] of lines.slice(0, maxLines).entries()) {
    const piece = index < lines.length - 1 ? `${line}\n` : line;
    const bytes = Buffer.byteLength(piece, "utf8");
    if (keptBytes + bytes > maxBytes) {
      if (keptLines === 0) {
        // One huge first line: keep as many whole characters as fit.
        const buffer = Buffer.from(piece, "utf8").subarray(0, maxBytes);
        kept = new TextDecoder("utf-8", { fatal: false }).decode(buffer).replace(/\uFFFD+$/, "");
        keptBytes = Buffer.byteLength(kept, "utf8");
      }
      break;
    }
    kept += piece;
    keptBytes += bytes;
    keptLines++;
  }
  const where = options.fullOutputAt ? `; full output in ${options.fullOutputAt}` : "";
  const note = `[output truncated: kept ${keptLines} of ${totalLines} lines (${size(keptBytes)} of ${size(totalBytes)})${where}]`;
  return { text: kept, truncated: true, note, totalLines, totalBytes };
}
