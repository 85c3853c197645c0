/**
 * The hook input from stdin, whole, within a time limit: an agent writes it
 * and closes the pipe; a terminal or a writer that never closes is an error
 * (the caller blocks), never a hang.
 */
import { MAX_INPUT_BYTES } from "./hook-input.js";

/** What the hook client (hook-client.ts) already read from stdin before it fell back to this path. */
export type ReadInput = { bytes: Buffer } | { timedOut: true } | { failed: string };

const PRESET = Symbol.for("rein.hook.stdin");

/** Hands this process's stdin, already read, to `readStdin` (the client's fallback). */
export function presetStdin(read: ReadInput): void {
  (globalThis as { [PRESET]?: ReadInput })[PRESET] = read;
}

export function readStdin(timeoutMs: number): Promise<string> {
  const preset = (globalThis as { [PRESET]?: ReadInput })[PRESET];
  if (preset !== undefined) {
    if ("failed" in preset) return Promise.reject(new Error(preset.failed));
    if ("timedOut" in preset)
      return Promise.reject(new Error(`no complete hook input on stdin within ${timeoutMs} ms`));
    if (preset.bytes.length > MAX_INPUT_BYTES)
      return Promise.reject(new Error(`the hook input is larger than ${MAX_INPUT_BYTES} bytes`));
    return Promise.resolve(preset.bytes.toString("utf8"));
  }
  const stdin = process.stdin;
  if (stdin.isTTY)
    return Promise.reject(new Error("no hook input: stdin is a terminal (an agent pipes the event's JSON)"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      stdin.destroy();
      reject(new Error(`no complete hook input on stdin within ${timeoutMs} ms`));
    }, timeoutMs);
    stdin.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_INPUT_BYTES) {
        clearTimeout(timer);
        stdin.destroy();
        reject(new Error(`the hook input is larger than ${MAX_INPUT_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    stdin.on("end", () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    stdin.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
