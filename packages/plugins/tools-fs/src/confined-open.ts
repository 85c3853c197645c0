/**
 * Confinement, part 2: opening what was decided, and nothing else (security
 * invariant 3). Between the gate's check and the open, a directory on the path can
 * be swapped for a symlink (`renameat2(RENAME_EXCHANGE)` by a second process).
 *
 * Invariant (Linux): the path is walked from the root one name at a time, each
 * name opened with O_NOFOLLOW relative to the descriptor of the directory before it
 * (`/proc/self/fd/<dir>/<name>` is openat: the kernel resolves it from the open
 * directory object, not from a path that can change), and every descriptor's real
 * location (`/proc/self/fd/<n>`) is checked to be inside the root before it is
 * used. A file is created only inside a directory whose descriptor was verified,
 * so nothing is ever created, read or written outside the root. Elsewhere (no
 * `/proc`), the file is opened with O_NOFOLLOW and its device and inode compared
 * with the realpath's (best effort; see docs/security-paths.md).
 */
import { constants, existsSync } from "node:fs";
import { type FileHandle, lstat, mkdir, open, readdir, readlink, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { isInside, ToolInputError } from "./paths.js";

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const PROC_FD = existsSync("/proc/self/fd");

export type OpenMode = "read" | "update" | "write";

export interface Opened {
  readonly handle: FileHandle;
  /** Whether `write` created the file. */
  readonly created: boolean;
}

const fdPath = (handle: FileHandle) => `/proc/self/fd/${handle.fd}`;

/** Where an open descriptor really is, refused unless inside `root`. Closes the handle on refusal. */
async function verify(handle: FileHandle, root: string, display: string): Promise<void> {
  let where: string;
  try {
    where = await readlink(fdPath(handle));
  } catch {
    await handle.close();
    throw new ToolInputError(`path ${JSON.stringify(display)}: could not verify where it was opened`);
  }
  if (!isInside(root, where)) {
    await handle.close();
    throw new ToolInputError(
      `path ${JSON.stringify(display)} led outside the root (to ${where}) while it was being opened; nothing was read or written`,
    );
  }
}

const linkRefusal = (display: string) =>
  new ToolInputError(
    `path ${JSON.stringify(display)} changed into a symbolic link while it was being opened; nothing was read or written`,
  );

/** Opens a name relative to a verified directory descriptor, never following a last symlink. */
async function openAt(dir: FileHandle, name: string, flags: number, display: string): Promise<FileHandle> {
  try {
    return await open(`${fdPath(dir)}/${name}`, flags | O_NOFOLLOW, 0o666);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || (code === "ENOTDIR" && (flags & O_DIRECTORY) !== 0)) {
      // ENOTDIR with O_DIRECTORY|O_NOFOLLOW on Linux is a symlink (or a file) where a directory was.
      const info = await lstat(`${fdPath(dir)}/${name}`).catch(() => undefined);
      if (code === "ELOOP" || info?.isSymbolicLink()) throw linkRefusal(display);
    }
    throw error;
  }
}

/**
 * Opens the directory `dir` (canonical, inside `root`) by walking down from the
 * root; with `create`, missing directories are made on the way (each inside a
 * verified parent).
 */
export async function openDirectory(
  root: string,
  dir: string,
  display: string,
  create = false,
): Promise<FileHandle> {
  if (!PROC_FD) return open(dir, O_RDONLY | O_DIRECTORY);
  let current = await open(root, O_RDONLY | O_DIRECTORY);
  await verify(current, root, display);
  const rel = path.relative(root, dir);
  for (const name of rel === "" ? [] : rel.split(path.sep)) {
    let next: FileHandle;
    try {
      try {
        next = await openAt(current, name, O_RDONLY | O_DIRECTORY, display);
      } catch (error) {
        if (!create || (error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
        await mkdir(`${fdPath(current)}/${name}`).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== "EEXIST") throw e;
        });
        next = await openAt(current, name, O_RDONLY | O_DIRECTORY, display);
      }
    } finally {
      await current.close();
    }
    await verify(next, root, display);
    current = next;
  }
  return current;
}

/** Opens the file `file` (canonical, inside `root`) for `mode`, verified on its descriptor. */
export async function openFile(root: string, file: string, mode: OpenMode, display: string): Promise<Opened> {
  if (!PROC_FD) return openPortable(root, file, mode, display);
  const dir = await openDirectory(root, path.dirname(file), display, mode === "write");
  const name = path.basename(file);
  try {
    let handle: FileHandle;
    let created = false;
    if (mode === "read") handle = await openAt(dir, name, O_RDONLY | O_NONBLOCK, display);
    else if (mode === "update") handle = await openAt(dir, name, O_RDWR, display);
    else {
      try {
        handle = await openAt(dir, name, O_WRONLY | O_CREAT | O_EXCL, display);
        created = true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        handle = await openAt(dir, name, O_WRONLY, display);
      }
    }
    await verify(handle, root, display);
    return { handle, created };
  } finally {
    await dir.close();
  }
}

/** Without /proc: O_NOFOLLOW, then the descriptor's inode must be the realpath's, inside the root. */
async function openPortable(root: string, file: string, mode: OpenMode, display: string): Promise<Opened> {
  if (mode === "write") await mkdir(path.dirname(file), { recursive: true });
  let created = false;
  let handle: FileHandle;
  const flags = mode === "read" ? O_RDONLY | O_NONBLOCK : mode === "update" ? O_RDWR : O_WRONLY | O_CREAT;
  if (mode === "write")
    created = !(await stat(file)
      .then(() => true)
      .catch(() => false));
  try {
    handle = await open(file, flags | O_NOFOLLOW, 0o666);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw linkRefusal(display);
    throw error;
  }
  const [opened, real] = await Promise.all([handle.stat(), realpath(file).catch(() => "")]);
  const named = real ? await stat(real).catch(() => undefined) : undefined;
  if (!real || !isInside(root, real) || named?.ino !== opened.ino || named?.dev !== opened.dev) {
    await handle.close();
    throw new ToolInputError(
      `path ${JSON.stringify(display)} led outside the root while it was being opened; nothing was read or written`,
    );
  }
  return { handle, created };
}

/** The entries of a directory, read through its verified descriptor. */
export async function listDirectory(root: string, dir: string, display: string) {
  if (!PROC_FD) return readdir(dir, { withFileTypes: true });
  const handle = await openDirectory(root, dir, display);
  try {
    return await readdir(fdPath(handle), { withFileTypes: true });
  } finally {
    await handle.close();
  }
}

/** Reads a whole file through a verified descriptor (regular files only). */
export async function readConfined(root: string, file: string, display: string, maxBytes?: number) {
  const { handle } = await openFile(root, file, "read", display);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new ToolInputError(`path ${JSON.stringify(display)} is not a regular file`);
    if (maxBytes !== undefined && info.size > maxBytes) return { buffer: undefined, size: info.size };
    return { buffer: await handle.readFile(), size: info.size };
  } finally {
    await handle.close();
  }
}

/** Replaces a file's content through a verified descriptor. */
export async function writeConfined(handle: FileHandle, content: string): Promise<void> {
  const bytes = Buffer.from(content, "utf8");
  await handle.truncate(0);
  // Positional writes: a descriptor already read to its end still writes from byte 0.
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, done);
    done += bytesWritten;
  }
}

export { O_RDONLY, O_RDWR };
