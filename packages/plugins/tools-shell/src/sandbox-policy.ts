/**
 * The sandbox's policy: options as a person writes them, resolved once per call into
 * absolute paths for `@anthropic-ai/sandbox-runtime`.
 *
 * Invariants:
 * - every path handed to the runtime is absolute (`~` expanded, relative paths taken
 *   from the tool root), because the runtime resolves relative ones against the
 *   process's cwd, not the tool's;
 * - Rein's own state in the root (`.rein/`, the `rein.config.*` files there) is never
 *   writable, whatever `allowWrite` says (`denyWrite` wins over `allowWrite`);
 * - the defaults deny reading the usual credential stores and give no network.
 */
import { existsSync, lstatSync, readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
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
}

/** `~` and `~/x` from the home directory; other relative paths from `base`. */
export function absolutePath(path: string, base: string): string {
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return join(homedir(), path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(base, path);
}

/** Rein's own state below `dir`: `.rein/` and every `rein.config.*` there. */
export function reinStateIn(dir: string): string[] {
  const paths = [join(dir, ".rein")];
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    // An unreadable directory has no config files we could protect.
  }
  for (const name of names) if (/^rein\.config\.[a-z]+$/.test(name)) paths.push(join(dir, name));
  return paths;
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

/** Git's hooks and config run code outside the sandbox later: never writable when `.git` is a directory. */
function gitStateIn(dir: string): string[] {
  const git = join(dir, ".git");
  try {
    if (!statSync(git).isDirectory()) return [];
  } catch {
    return [];
  }
  return [join(git, "hooks"), join(git, "config")].filter((path) => existsSync(path));
}

export function resolveSandboxPolicy(
  options: SandboxOptions,
  where: { root: string; cwd: string; privateTmp: string; outputs?: string },
): ResolvedSandboxPolicy | undefined {
  const mode = options.mode ?? DEFAULT_SANDBOX_MODE;
  if (mode === "off") return undefined;
  const fs = options.filesystem ?? {};
  const fromRoot = (path: string) => absolutePath(path, where.root);
  const allowWrite = [where.privateTmp];
  if (mode === "workspace-write") allowWrite.push(where.root, ...(fs.allowWrite ?? []).map(fromRoot));
  const protectedDirs = [...new Set([where.root, where.cwd])];
  const denyWrite = [
    ...protectedDirs.flatMap(reinStateIn),
    ...protectedDirs.flatMap(gitStateIn),
    ...(fs.denyWrite ?? []).map(fromRoot),
  ];
  return {
    mode,
    allowWrite: [...new Set(allowWrite)],
    denyWrite: [...new Set(denyWrite)],
    // Other tools' and sessions' kept outputs and temp dirs are not this command's to read.
    denyRead: [...new Set([...(fs.denyRead ?? DEFAULT_DENY_READ).map(fromRoot), privateParent()])],
    allowRead: where.outputs === undefined ? [] : [where.outputs],
    allowedDomains: [...(options.network?.allowedDomains ?? [])],
    deniedDomains: [...(options.network?.deniedDomains ?? [])],
  };
}
