/**
 * In `--json` modes stdout carries only our JSON (one object per line, or one
 * document). Invariant: while reserved, anything else that writes to stdout through
 * Node (a plugin's `console.log`/`info`/`debug`, `process.stdout.write`) goes to
 * stderr instead; only the returned writer reaches stdout. Writes straight to file
 * descriptor 1 (`fs.writeSync(1, ...)`) cannot be caught.
 */

export interface JsonOut {
  /** Writes to the real stdout. */
  write(text: string): void;
  /** Gives stdout back (idempotent). */
  release(): void;
}

export function reserveStdout(): JsonOut {
  const stdout = process.stdout;
  const original = stdout.write;
  const redirected = ((...args: Parameters<typeof original>) =>
    (process.stderr.write as (...a: typeof args) => boolean)(...args)) as typeof original;
  stdout.write = redirected;
  let released = false;
  return {
    write(text) {
      original.call(stdout, text);
    },
    release() {
      if (released) return;
      released = true;
      if (stdout.write === redirected) stdout.write = original;
    },
  };
}
