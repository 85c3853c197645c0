/**
 * What a warm hook daemon's answers rest on, on disk: every file its stack was
 * built from (the config layers, the modules it loaded, the trust record, the
 * grant key) and every config name whose appearance would change which config
 * is found, each with its identity as `stat` tells it (device, inode, size,
 * modification and change time in nanoseconds, or absent). Re-checked before
 * each decision: any difference and the daemon does not answer.
 *
 * Why `ctime`: a process can set a file's modification time back after
 * editing it (`touch -d`), but not its change time; an edit that keeps size
 * and mtime still moves ctime.
 */
import { statSync } from "node:fs";

function signature(file: string): string {
  try {
    const stats = statSync(file, { bigint: true, throwIfNoEntry: false });
    if (stats === undefined) return "absent";
    return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}`;
  } catch (error) {
    return `error:${(error as NodeJS.ErrnoException).code ?? "unknown"}`;
  }
}

/**
 * Two groups: the project's and the user's files (config layers, project
 * plugins and what they import, the trust record), checked before every
 * decision; and Rein's own installation (the CLI and the packages it depends
 * on, about a thousand files), checked once each answer is out and before the
 * next decision (hook-daemon.ts), off the agent's wait: after an upgrade of Rein itself at most one answer comes from
 * the code that was installed when the event arrived, as it would from a
 * process started a moment earlier.
 */
export class WatchedFiles {
  readonly #before = new Map<string, string>();
  readonly #after = new Map<string, string>();
  readonly #isInstalled: (file: string) => boolean;
  /** How much of the append-only module list `addLoaded` has recorded already. */
  #loadedSeen = 0;

  constructor(isInstalled: (file: string) => boolean) {
    this.#isInstalled = isInstalled;
  }

  /** Records `file` as it is now (a file already recorded keeps its first identity). */
  add(file: string): void {
    const group = this.#isInstalled(file) ? this.#after : this.#before;
    if (!group.has(file)) group.set(file, signature(file));
  }

  /**
   * Records the files appended to `loaded` (the process's append-only list of
   * module files) since the last call: per decision only what it newly loaded,
   * not the whole list again (a re-walk of every module cost ~10 ms per answer).
   */
  addLoaded(loaded: readonly string[]): void {
    for (; this.#loadedSeen < loaded.length; this.#loadedSeen++) this.add(loaded[this.#loadedSeen] as string);
  }

  get size(): { before: number; after: number } {
    return { before: this.#before.size, after: this.#after.size };
  }

  /** The first project or user file no longer as recorded, or undefined. */
  changed(): string | undefined {
    return firstChanged(this.#before);
  }

  /** The first file of Rein's installation no longer as recorded, or undefined. */
  installChanged(): string | undefined {
    return firstChanged(this.#after);
  }
}

function firstChanged(files: ReadonlyMap<string, string>): string | undefined {
  for (const [file, then] of files) if (signature(file) !== then) return file;
  return undefined;
}
