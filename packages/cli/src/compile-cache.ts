/**
 * Node's compile cache for Rein's own modules (`module.enableCompileCache()`, Node
 * 22.1+): V8's code cache of every ES module Node loads, kept on disk, so a start
 * compiles nothing it compiled before (the CLI's graph is ~1,500 modules).
 *
 * It lives in `$REIN_CACHE_DIR/node-compile-cache`, else
 * `$XDG_CACHE_HOME/rein/node-compile-cache`, else `~/.cache/rein/node-compile-cache`
 * (Node adds a folder per Node version). Node checks each entry against the module's
 * source hash, so a changed file is compiled afresh.
 *
 * Invariant: enabling never blocks or fails a start. Node 24's `enableCompileCache()`
 * spun at full CPU, never returning, when handed a folder it could not create under
 * `/proc`: Node's recursive `mkdir` loops there forever (procfs answers ENOENT for the
 * folder and EEXIST for its parent). So the folder is made here one level at a time,
 * and Node gets it only once it is known to be writable: a marker file in it, written
 * on the first start that could. `NODE_DISABLE_COMPILE_CACHE=1` turns it off, and a
 * cache Node already enabled (`NODE_COMPILE_CACHE`) is left as is.
 */
import { closeSync, constants, mkdirSync, openSync, statSync } from "node:fs";
import module from "node:module";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** The marker that proves the folder took a write. */
const MARKER = ".rein-writable";

export type CompileCacheOutcome =
  | { enabled: true; dir: string }
  | {
      enabled: false;
      reason: "disabled" | "unsupported" | "already-enabled" | "unwritable" | "failed";
      dir?: string;
    };

/** Rein's cache root: `$REIN_CACHE_DIR`, else `$XDG_CACHE_HOME/rein`, else `~/.cache/rein`. */
export function reinCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REIN_CACHE_DIR) return env.REIN_CACHE_DIR;
  return join(env.XDG_CACHE_HOME || join(homedir(), ".cache"), "rein");
}

/** The folder Rein gives Node for its compile cache, from the environment. */
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(reinCacheRoot(env), "node-compile-cache");
}

/** `mkdir -p` one level at a time, never `{ recursive: true }` (the /proc loop above); throws on the first failure. */
function makeFolders(dir: string): void {
  const missing: string[] = [];
  for (let at = resolve(dir); !statSync(at, { throwIfNoEntry: false })?.isDirectory(); at = dirname(at)) {
    if (dirname(at) === at) throw new Error(`no root for ${dir}`);
    missing.unshift(at);
  }
  for (const folder of missing) mkdirSync(folder, { mode: 0o700 });
}

/** True once the folder exists and holds the marker; tries to make both (no throw). */
export function writableCacheDir(dir: string): boolean {
  const marker = join(dir, MARKER);
  try {
    if (statSync(marker, { throwIfNoEntry: false })?.isFile()) return true;
    makeFolders(dir);
    closeSync(openSync(marker, constants.O_CREAT | constants.O_WRONLY, 0o600));
    return statSync(marker).isFile();
  } catch {
    return false;
  }
}

type Enable = (dir: string) => { status: number; message?: string; directory?: string } | undefined;

/** Enables Node's compile cache in Rein's cache folder when that is safe; says what happened. */
export function enableCompileCache(
  env: NodeJS.ProcessEnv = process.env,
  enable: Enable | null = (module as { enableCompileCache?: Enable }).enableCompileCache ?? null,
): CompileCacheOutcome {
  if (env.NODE_DISABLE_COMPILE_CACHE) return { enabled: false, reason: "disabled" };
  if (enable === null) return { enabled: false, reason: "unsupported" };
  if (env.NODE_COMPILE_CACHE) return { enabled: false, reason: "already-enabled" };
  const dir = compileCacheDir(env);
  if (!writableCacheDir(dir)) return { enabled: false, reason: "unwritable", dir };
  try {
    const result = enable(dir);
    const { ENABLED, ALREADY_ENABLED } = (
      module as { constants?: { compileCacheStatus?: Record<string, number> } }
    ).constants?.compileCacheStatus ?? { ENABLED: 1, ALREADY_ENABLED: 2 };
    if (result?.status === ENABLED) return { enabled: true, dir };
    if (result?.status === ALREADY_ENABLED) return { enabled: false, reason: "already-enabled", dir };
    return { enabled: false, reason: "failed", dir };
  } catch {
    return { enabled: false, reason: "failed", dir };
  }
}
