/**
 * Where cut outputs are kept whole: one private directory per tool (0700, made on
 * first use, outside the tool root), files 0600, each capped at `maxBytes`, masked
 * when a mask is configured, and all removed on `dispose()` (plugin dispose, or the
 * process exiting).
 *
 * Every such directory sits in one parent per user, `<tmp>/rein-bash-<uid>` (0700, ours,
 * not a symlink - checked before use), so a sandbox can deny the parent in one rule and
 * re-open only its own tool's directories.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A secret pattern, in the shape `@rein/plugin-redact` takes its `patterns`. */
export interface MaskPattern {
  name: string;
  pattern: string;
  flags?: string;
}

export interface OutputFileOptions {
  /** Most bytes kept in one full-output file; the rest is dropped with a note. Default 16 MiB. */
  maxBytes?: number;
  /** Masks the kept file: a function, or patterns whose matches become `[REDACTED:<name>]`. */
  mask?: ((text: string) => string) | MaskPattern[];
}

export const DEFAULT_OUTPUT_FILE_MAX_BYTES = 16 * 1024 * 1024;

/** The per-user parent of every tool's private directories. */
export function privateParent(base = tmpdir()): string {
  return join(base, `rein-bash-${process.getuid?.() ?? "user"}`);
}

/** Makes the parent (0700) or checks that the one there is ours, private and not a symlink. */
function ensurePrivateParent(path: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
    chmodSync(path, 0o700);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = lstatSync(path);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new Error(`${path} is not a private directory of this user (0700, not a symlink); remove it`);
  }
}

export function maskFunction(mask: OutputFileOptions["mask"]): ((text: string) => string) | undefined {
  if (mask === undefined) return undefined;
  if (typeof mask === "function") return mask;
  const compiled = mask.map((entry) => {
    const flags = new Set([...(entry.flags ?? ""), "g"]);
    return { name: entry.name, regex: new RegExp(entry.pattern, [...flags].join("")) };
  });
  return (text) => compiled.reduce((out, { name, regex }) => out.replace(regex, `[REDACTED:${name}]`), text);
}

/**
 * Directories still to remove when the process exits: one exit listener for all of
 * them (a listener per tool would pile up in a process that makes many tools).
 */
const live = new Set<{ dispose(): void }>();
let exitHookInstalled = false;

function removeOnExit(files: { dispose(): void }): void {
  live.add(files);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const entry of [...live]) entry.dispose();
  });
}

export class OutputFiles {
  readonly maxBytes: number;
  private readonly mask: ((text: string) => string) | undefined;
  /** Where the directory is (or will be): named now, made on first use. */
  readonly path: string;
  private made = false;

  constructor(
    options: OutputFileOptions = {},
    private readonly parent = privateParent(),
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_OUTPUT_FILE_MAX_BYTES;
    this.mask = maskFunction(options.mask);
    this.path = join(parent, randomBytes(8).toString("hex"));
  }

  /** The private directory, made 0700 on first use (mkdir fails if the name was taken). */
  directory(): string {
    if (!this.made) {
      ensurePrivateParent(this.parent);
      mkdirSync(this.path, { mode: 0o700 });
      chmodSync(this.path, 0o700);
      this.made = true;
      removeOnExit(this);
    }
    return this.path;
  }

  /** A fresh file path in the private directory. */
  newPath(): string {
    return join(this.directory(), `output-${Date.now()}-${randomBytes(4).toString("hex")}.log`);
  }

  /** Applies the mask to a finished file (a secret cut across two writes is still found). */
  finish(path: string): void {
    if (this.mask === undefined) return;
    const text = readFileSync(path, "utf8");
    writeFileSync(path, this.mask(text), { mode: 0o600 });
  }

  /** Removes the directory and every kept file. */
  dispose(): void {
    live.delete(this);
    if (this.made) rmSync(this.path, { recursive: true, force: true });
    this.made = false;
  }
}
