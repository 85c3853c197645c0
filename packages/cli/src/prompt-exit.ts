/**
 * Prompt exit for commands that are done once they return (`rein run`, `rein dev`):
 * the process exits as soon as the command has returned, stdout and stderr are
 * flushed and Node's compile cache is written, instead of letting Node tear its heap
 * down first (20-50 ms of a run's last response → exit on 2 shared cores) or waiting
 * for work nothing awaits any more (a sandbox runtime import a text-only run aborted).
 *
 * Invariant: nothing the command owns is cut. By the time such a command returns, its
 * session is closed (fsynced, lock released) and its plugins are disposed (each
 * `onDispose` awaited); `process.on("exit")` handlers still run. Commands that return
 * while their work goes on (servers) do not ask for it.
 */
import module from "node:module";

let requested = false;

/** Called by a command whose return means the process has nothing left to do. */
export function exitWhenDone(): void {
  requested = true;
}

/** Resolves once everything written to `stream` so far has been handed to the OS (or the stream is gone). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableEnded) return Promise.resolve();
  return new Promise((done) => {
    try {
      stream.write("", () => done());
    } catch {
      done();
    }
  });
}

/** Ends the command with `code`: at once after a prompt-exit command, else when Node's loop drains. */
export async function finish(code: number): Promise<void> {
  process.exitCode = code;
  if (!requested) return;
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  try {
    (module as { flushCompileCache?: () => void }).flushCompileCache?.();
  } catch {
    // A cache that cannot be written costs the next start its compile, nothing else.
  }
  process.exit(code);
}
