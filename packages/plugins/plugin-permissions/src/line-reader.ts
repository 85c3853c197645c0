/**
 * Reads one line at a time from a stream without owning it: the stream flows only
 * while a line is awaited and is paused again afterwards, so an idle `process.stdin`
 * never keeps the process alive. Text after the line stays buffered for the next
 * read (an answer typed ahead is not lost). A line ends at `\n`, `\r\n` or a lone
 * `\r` (what Enter sends on a terminal in raw mode).
 */

export interface LineSource {
  on(event: "data", listener: (chunk: unknown) => void): unknown;
  on(event: "end" | "close", listener: () => void): unknown;
  off(event: "data", listener: (chunk: unknown) => void): unknown;
  off(event: "end" | "close", listener: () => void): unknown;
  pause?(): unknown;
  resume?(): unknown;
}

export class LineReader {
  private buffer = "";
  /** The last line ended with `\r`: a `\n` arriving next belongs to it. */
  private afterReturn = false;
  private ended = false;
  private waiting: (() => void) | undefined;

  constructor(private readonly input: LineSource & { readableEnded?: boolean }) {
    // Kept for the reader's life: the end may come while no line is awaited.
    const onEnd = () => {
      this.ended = true;
      this.waiting?.();
    };
    input.on("end", onEnd);
    input.on("close", onEnd);
    if (input.readableEnded === true) this.ended = true;
  }

  /** The next line (without its newline), or `undefined` when the input ended or `signal` aborted. */
  readLine(signal?: AbortSignal): Promise<string | undefined> {
    const ready = this.take();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.ended || signal?.aborted) return Promise.resolve(this.drainRest());
    return new Promise((resolve) => {
      const finish = (line: string | undefined) => {
        this.input.off("data", onData);
        this.waiting = undefined;
        signal?.removeEventListener("abort", onAbort);
        this.input.pause?.();
        resolve(line);
      };
      const onData = (chunk: unknown) => {
        this.buffer += typeof chunk === "string" ? chunk : String(chunk);
        const line = this.take();
        if (line !== undefined) finish(line);
      };
      const onAbort = () => finish(undefined);
      this.waiting = () => finish(this.drainRest());
      this.input.on("data", onData);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.input.resume?.();
    });
  }

  private take(): string | undefined {
    if (this.afterReturn && this.buffer.startsWith("\n")) this.buffer = this.buffer.slice(1);
    if (this.buffer !== "") this.afterReturn = false;
    const end = this.buffer.search(/[\r\n]/);
    if (end === -1) return undefined;
    const line = this.buffer.slice(0, end);
    if (this.buffer[end] === "\r") {
      const crlf = this.buffer[end + 1] === "\n";
      this.buffer = this.buffer.slice(end + (crlf ? 2 : 1));
      // A `\r` at the end of what arrived so far: its `\n` may still be on the way.
      this.afterReturn = !crlf && this.buffer === "";
    } else {
      this.buffer = this.buffer.slice(end + 1);
    }
    return line;
  }

  private drainRest(): string | undefined {
    if (!this.ended || this.buffer === "") return undefined;
    const rest = this.buffer;
    this.buffer = "";
    return rest;
  }
}
