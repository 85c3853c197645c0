/**
 * The hook input from stdin, whole, within a time limit: an agent writes it
 * and closes the pipe; a terminal or a writer that never closes is an error
 * (the caller blocks), never a hang.
 */
import { MAX_INPUT_BYTES } from "./hook-input.js";

export function readStdin(timeoutMs: number): Promise<string> {
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
