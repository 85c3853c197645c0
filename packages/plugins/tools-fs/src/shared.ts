/**
 * What every file tool shares: resolved options, the error-result shape, byte
 * helpers and the head truncation used for listings.
 */
import {
  isSdkError,
  type ProtectedFiles,
  type TextMasks,
  type ToolResult,
  type WalkExclusions,
} from "@rein/sdk";
import { ToolInputError } from "./paths.js";

export interface FsToolsOptions {
  /** The directory the tools are confined to; relative to the working directory. Default: the working directory. */
  root?: string;
  /** Most bytes of text one result carries. Default 51200 (50 KiB). */
  maxBytes?: number;
  /** Most lines `read` returns at once. Default 2000. */
  maxLines?: number;
  /** Largest image `read` returns as image content. Default 5 MiB. */
  maxImageBytes?: number;
  /**
   * More globs (relative to the working directory) that write and edit refuse. Rein's
   * and git's own state (`reinStateSegment`) is refused whatever this says.
   */
  protectedPaths?: string[];
  /** Walk exclusions to honour (the plugin wires the harness's; a bare tool pack has none). */
  exclusions?: WalkExclusions;
  /** Text masks applied before grep cuts a long line (the plugin wires the harness's). */
  masks?: TextMasks;
  /** Files the host protects (config, loaded plugin files); the plugin wires the harness's. */
  protectedFiles?: ProtectedFiles;
}

/**
 * Extra globs write and edit refuse by default: none. Rein's and git's own state is
 * refused always (protected-paths.ts), not through this list, so a config cannot
 * give it up.
 */
export const PROTECTED_PATHS: readonly string[] = [];

export interface ResolvedFsOptions {
  root: string | undefined;
  maxBytes: number;
  maxLines: number;
  maxImageBytes: number;
  protectedPaths: readonly string[];
  exclusions: WalkExclusions | undefined;
  masks: TextMasks | undefined;
  protectedFiles: ProtectedFiles | undefined;
}

export const DEFAULT_MAX_BYTES = 50 * 1024;
export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export function resolveOptions(options: FsToolsOptions = {}): ResolvedFsOptions {
  return {
    root: options.root,
    maxBytes: options.maxBytes ?? DEFAULT_MAX_BYTES,
    maxLines: options.maxLines ?? DEFAULT_MAX_LINES,
    maxImageBytes: options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES,
    protectedPaths: options.protectedPaths ?? PROTECTED_PATHS,
    exclusions: options.exclusions,
    masks: options.masks,
    protectedFiles: options.protectedFiles,
  };
}

export const textOf = (text: string): ToolResult["content"] => [{ type: "text", text }];

export function errorResult(text: string): ToolResult<never> {
  return { content: textOf(text), isError: true };
}

const FS_ERRORS: Record<string, string> = {
  ENOENT: "does not exist",
  EISDIR: "is a directory",
  ENOTDIR: "is not a directory (or a parent is a file)",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EEXIST: "already exists",
  ENOTEMPTY: "is not empty",
  ELOOP: "has too many levels of symbolic links",
  ENAMETOOLONG: "is too long",
  EINVAL: "is not a valid path",
};

/**
 * Runs a tool body and turns refusals and file-system errors into error results the
 * model can act on (`path "x" does not exist`), instead of stack traces.
 */
export async function guarded<T>(
  display: () => string,
  body: () => Promise<ToolResult<T>>,
): Promise<ToolResult<T>> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof ToolInputError) return errorResult(error.message);
    if (isSdkError(error, "invalid_path")) return errorResult(error.message);
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (code && FS_ERRORS[code])
      return errorResult(`path ${JSON.stringify(shorten(display()))} ${FS_ERRORS[code]}`);
    throw error;
  }
}

const shorten = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}...` : text);

export const byteLength = (text: string) => Buffer.byteLength(text, "utf8");

/** Cuts a string to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (byteLength(text) <= maxBytes) return text;
  const cut = Buffer.from(text, "utf8").subarray(0, maxBytes).toString("utf8");
  // A split multi-byte character decodes to U+FFFD at the end: drop it.
  return cut.endsWith("\uFFFD") ? cut.slice(0, -1) : cut;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * Keeps whole lines from the start while they fit in `maxBytes` (joined with "\n").
 * Returns how many lines were kept.
 */
export function takeLinesWithin(lines: readonly string[], maxBytes: number): number {
  let used = 0;
  let count = 0;
  for (const line of lines) {
    const size = byteLength(line) + (count > 0 ? 1 : 0);
    if (used + size > maxBytes) break;
    used += size;
    count++;
  }
  return count;
}

/** Whether a buffer looks binary (a NUL byte in its first 8 KB). */
export function looksBinary(buffer: Uint8Array): boolean {
  const end = Math.min(buffer.length, 8192);
  for (let i = 0; i < end; i++) if (buffer[i] === 0) return true;
  return false;
}

/** Directories the walking tools (find, grep) skip unless asked to search inside them. */
export const SKIPPED_DIRS = [".git", "node_modules"];
