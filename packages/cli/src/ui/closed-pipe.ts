/**
 * A reader that goes away (`rein models | head -n 1`, `rein run --json | grep -m1 ...`)
 * closes our stdout; writing to it then fails with EPIPE. Invariant: that is never
 * a crash or a stack trace. The first EPIPE marks stdout closed and tells whoever
 * listens (a run aborts its agent cleanly, as on Ctrl-C); later writes are dropped.
 * The same holds for stderr, which nobody is told about (there is no one to tell).
 */

const listeners = new Set<() => void>();
let closed = false;
let watching = false;

const isClosedPipe = (error: unknown) =>
  (error as NodeJS.ErrnoException | undefined)?.code === "EPIPE" ||
  (error as NodeJS.ErrnoException | undefined)?.code === "ERR_STREAM_DESTROYED";

/** Installs the handlers once; call before anything writes. */
export function watchClosedPipes(): void {
  if (watching) return;
  watching = true;
  process.stdout.on("error", (error) => {
    if (!isClosedPipe(error)) throw error;
    if (closed) return;
    closed = true;
    for (const listener of [...listeners]) listener();
  });
  process.stderr.on("error", (error) => {
    if (!isClosedPipe(error)) throw error;
  });
}

/** Whether stdout's reader has gone away. */
export const stdoutClosed = (): boolean => closed;

/** Calls `listener` once when stdout's reader goes away; returns the unsubscribe. */
export function onStdoutClosed(listener: () => void): () => void {
  if (closed) {
    listener();
    return () => undefined;
  }
  listeners.add(listener);
  return () => listeners.delete(listener);
}
