/**
 * The sandbox's policy: options as a person writes them, resolved once per call into
 * absolute paths for `@anthropic-ai/sandbox-runtime`.
 *
 * Invariants:
 * - every path handed to the runtime is absolute (`~` expanded, relative paths taken
 *   from the tool root), because the runtime resolves relative ones against the
 *   process's cwd, not the tool's;
 * - Rein's and git's state in every writable folder a later `rein` or `git` reads
 *   (`.rein/`, `.rein-plugins/`, every `rein.config.*` name, `.git` but for what
 *   `git add`/`commit` write) is never writable, existing or not, whatever
 *   `allowWrite` says (`denyWrite` wins over `allowWrite`);
 * - the user's Rein config dir (`REIN_CONFIG_DIR`, `XDG_CONFIG_HOME`, `~/.config/rein`)
 *   is neither readable nor writable, whatever `denyRead` says; it holds the hook
 *   daemon's folder (`hookd/`) too;
 * - Rein's cache dir (`REIN_CACHE_DIR`, `XDG_CACHE_HOME`, `~/.cache/rein`: transpiled
 *   config and plugins the next start runs) is never writable, whatever `allowWrite` says;
 * - the defaults deny reading the usual credential stores and give no network.
 */
import { lstatSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import {
  GIT_CODE_ENTRIES,
  GIT_POINTER_FILES,
  GIT_WRITABLE_ENTRIES,
  REIN_STATE_NAMES,
  reinCacheDir,
  reinConfigDir,
} from "@rein/sdk";
import { privateParent } from "./output-files.js";

export type SandboxMode = "off" | "workspace-write" | "read-only";

export interface SandboxFilesystemOptions {
  /** Extra writable paths (`workspace-write` already writes the root and a private temp dir). */
  allowWrite?: string[];
  /** Paths never writable, even inside `allowWrite`. Added to Rein's own state. */
  denyWrite?: string[];
  /** Paths never readable. Replaces the default list when given (see `DEFAULT_DENY_READ`). */
  denyRead?: string[];
}

export interface SandboxNetworkOptions {
  /** Hosts the command may reach through the sandbox's proxy (`example.com`, `*.npmjs.org`, `127.0.0.1:8080`). Default none. */
  allowedDomains?: string[];
  /** Hosts never reached, even if allowed. */
  deniedDomains?: string[];
}

export interface SandboxOptions {
  /** `workspace-write` (default): write the root and a private temp dir; `read-only`: write only the temp dir; `off`: no sandbox. */
  mode?: SandboxMode;
  filesystem?: SandboxFilesystemOptions;
  network?: SandboxNetworkOptions;
  /** Absolute path of `bwrap` (default: found on PATH). */
  bwrapPath?: string;
  /** Absolute path of `socat` (default: found on PATH). */
  socatPath?: string;
}

export const DEFAULT_SANDBOX_MODE: SandboxMode = "workspace-write";

/** Credential stores no sandboxed command reads unless `filesystem.denyRead` says otherwise. */
export const DEFAULT_DENY_READ: readonly string[] = [
  "~/.ssh",
  "~/.aws",
  "~/.gnupg",
  "~/.config/rein",
  "~/.netrc",
  "~/.git-credentials",
  "~/.docker/config.json",
  "~/.kube",
  "~/.config/gcloud",
  "~/.azure",
  "~/.config/gh",
];

/** The runtime's policy for one call, all paths absolute. */
export interface ResolvedSandboxPolicy {
  mode: Exclude<SandboxMode, "off">;
  allowWrite: string[];
  denyWrite: string[];
  denyRead: string[];
  /** Re-opened inside `denyRead`: this tool's own output files. */
  allowRead: string[];
  allowedDomains: string[];
  deniedDomains: string[];
  /** Git pointer files absent before the command: any it creates are removed afterwards. */
  absentPointers: string[];
}

/** `~` and `~/x` from the home directory; other relative paths from `base`. */
export function absolutePath(path: string, base: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(base, path);
}

/**
 * Rein's own state in `dir`: `.rein/`, `.rein-plugins/` and every `rein.config.*`
 * name, whether it exists or not (the runtime blocks creating an absent deny path):
 * a `rein.config.ts` planted beside a `rein.config.json` would win the next start.
 */
export function reinStateIn(dir: string): string[] {
  return [...REIN_STATE_NAMES.map((name) => join(dir, name)), join(dir, ".git")];
}

/**
 * The first of `paths` that is a symbolic link, if any. The runtime protects where a
 * symlinked deny path leads, not the link's name, which a command in the writable
 * root could then replace (`rm .rein; mkdir .rein`): such state is refused instead.
 */
export function symlinkedState(paths: readonly string[]): string | undefined {
  for (const path of paths) {
    try {
      if (lstatSync(path).isSymbolicLink()) return path;
    } catch {
      // Absent: the runtime blocks its creation.
    }
  }
  return undefined;
}

/** What the sandbox binds for git in one folder: writable mount points and read-only paths. */
export interface GitBoundary {
  allowWrite: string[];
  denyWrite: string[];
  /** Pointer files absent now (git opens them when they exist): removed if a command creates them. */
  absentPointers: string[];
}

/**
 * Git reads `.git` as code and config later, unsandboxed (hooks, `core.fsmonitor`,
 * a `commondir` or a worktree's `.git` file pointing at another git dir). So:
 * - no `.git` yet: creating one is refused (a planted repository would be run by
 *   the next `git` in this folder);
 * - a `.git` file (a worktree's pointer): read-only;
 * - a `.git` directory: bound on itself, which makes it a mount point that cannot be
 *   renamed away and replaced by a fresh one; inside it only what `git add` and
 *   `git commit` write stays writable (`GIT_WRITABLE_ENTRIES`); every other entry,
 *   and every name git reads as code or config (`GIT_CODE_ENTRIES`), existing or
 *   not, is read-only; but an absent pointer file (`GIT_POINTER_FILES`: git dies
 *   on a placeholder there) is removed after the command if it created one.
 */
export function gitBoundaryIn(dir: string): GitBoundary {
  const git = join(dir, ".git");
  let isDirectory: boolean;
  try {
    isDirectory = lstatSync(git).isDirectory();
  } catch {
    return { allowWrite: [], denyWrite: [git], absentPointers: [] };
  }
  if (!isDirectory) return { allowWrite: [], denyWrite: [git], absentPointers: [] };
  let names: string[] = [];
  try {
    names = readdirSync(git);
  } catch {
    // Unlistable: nothing in it can be told apart, so all of it stays read-only.
    return { allowWrite: [], denyWrite: [git], absentPointers: [] };
  }
  const absent = GIT_POINTER_FILES.filter((name) => !names.includes(name));
  const denied = new Set([
    ...names.filter((name) => !GIT_WRITABLE_ENTRIES.includes(name)),
    ...GIT_CODE_ENTRIES.filter((name) => !absent.includes(name)),
  ]);
  return {
    allowWrite: [git],
    denyWrite: [...denied].map((name) => join(git, name)),
    absentPointers: absent.map((name) => join(git, name)),
  };
}

/** `dir` and every folder between it and `root` (dir inside root), deepest first. */
function foldersUpTo(dir: string, root: string): string[] {
  const folders: string[] = [];
  let current = dir;
  while (isInside(root, current)) {
    folders.push(current);
    if (current === root) break;
    current = dirname(current);
  }
  return folders;
}

const isInside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

export function resolveSandboxPolicy(
  options: SandboxOptions,
  where: { root: string; cwd: string; privateTmp: string; outputs?: string },
  env: NodeJS.ProcessEnv = process.env,
): ResolvedSandboxPolicy | undefined {
  const mode = options.mode ?? DEFAULT_SANDBOX_MODE;
  if (mode === "off") return undefined;
  const fs = options.filesystem ?? {};
  const fromRoot = (path: string) => absolutePath(path, where.root);
  const allowWrite = [where.privateTmp];
  if (mode === "workspace-write") allowWrite.push(where.root, ...(fs.allowWrite ?? []).map(fromRoot));
  // Every folder a later `rein` or `git` may be started in: the root, the working
  // directory and those between, and the extra writable folders. The folders between
  // are bound on themselves so that none can be renamed away and rebuilt.
  const between = foldersUpTo(where.cwd, where.root).filter((dir) => dir !== where.root);
  const protectedDirs = [
    ...new Set([where.root, where.cwd, ...between, ...(fs.allowWrite ?? []).map(fromRoot)]),
  ].filter((dir) => !isInside(reinConfigDir(env), dir));
  if (mode === "workspace-write") allowWrite.push(...between);
  const git = protectedDirs.map(gitBoundaryIn);
  if (mode === "workspace-write") allowWrite.push(...git.flatMap((g) => g.allowWrite));
  const configDir = reinConfigDir(env);
  // A writable path at or inside the config dir would be bound back over its read deny.
  const writable = allowWrite.filter((path) => !isInside(configDir, path));
  const denyWrite = [
    ...protectedDirs.flatMap((dir) => REIN_STATE_NAMES.map((name) => join(dir, name))),
    ...git.flatMap((g) => g.denyWrite),
    configDir,
    reinCacheDir(env),
    ...(fs.denyWrite ?? []).map(fromRoot),
  ];
  return {
    mode,
    allowWrite: [...new Set(writable)],
    denyWrite: [...new Set(denyWrite)],
    // Other tools' and sessions' kept outputs and temp dirs are not this command's to read;
    // nor is Rein's config dir (grant key, trust records), wherever it is configured.
    denyRead: [...new Set([...(fs.denyRead ?? DEFAULT_DENY_READ).map(fromRoot), privateParent(), configDir])],
    allowRead: where.outputs === undefined ? [] : [where.outputs],
    absentPointers: mode === "workspace-write" ? git.flatMap((g) => g.absentPointers) : [],
    allowedDomains: [...(options.network?.allowedDomains ?? [])],
    deniedDomains: [...(options.network?.deniedDomains ?? [])],
  };
}
