/**
 * Where Rein's and git's own state lives (security invariants 4 and 9): the
 * names that Rein or git will later read as code or config, so every boundary
 * (the file tools, the shell's sandbox, the CLI) refuses to write them, whether
 * they exist yet or not. One list, here, so the boundaries cannot disagree.
 *
 * Why names and not only files: a file that does not exist yet is the easiest to
 * plant (`rein.config.ts` beside a `rein.config.json` wins the next start); so
 * every config file name is protected in a folder, not just the one that exists.
 */
import os from "node:os";
import path from "node:path";

/** Config file names, in the order the CLI prefers them when several exist. */
export const CONFIG_FILE_NAMES = [
  "rein.config.ts",
  "rein.config.mts",
  "rein.config.js",
  "rein.config.mjs",
  "rein.config.json",
] as const;

/** Rein's state in a project folder: its state dir, the project plugin dir, every config name. */
export const REIN_STATE_NAMES: readonly string[] = [".rein", ".rein-plugins", ...CONFIG_FILE_NAMES];

/**
 * What `git add` and `git commit` write inside `.git/` (plus their lock and message
 * files): nothing here is read as code or config by git. Everything else in `.git/`
 * is protected.
 */
export const GIT_WRITABLE_ENTRIES: readonly string[] = [
  "objects",
  "refs",
  "logs",
  "index",
  "index.lock",
  "COMMIT_EDITMSG",
];

/**
 * Entries of `.git/` that git reads as code, config or a pointer to another git
 * directory, protected even before they exist (a new `commondir` or `config` leads
 * the next unsandboxed `git` to code the agent wrote).
 */
export const GIT_CODE_ENTRIES: readonly string[] = [
  "config",
  "config.worktree",
  "hooks",
  "commondir",
  "info",
  "modules",
  "worktrees",
  "HEAD",
  "remotes",
  "branches",
  "rebase-merge",
  "rebase-apply",
  "sequencer",
];

/**
 * The entries of `GIT_CODE_ENTRIES` that git opens as a file whenever they exist, so
 * that no placeholder can stand in for them while absent (git dies reading one): a
 * sandbox removes them after a command that created them instead.
 */
export const GIT_POINTER_FILES: readonly string[] = ["commondir", "config.worktree"];

/**
 * The user's Rein config dir: `$REIN_CONFIG_DIR`, else `$XDG_CONFIG_HOME/rein`, else
 * `~/.config/rein`. The grant key and the trust records live there; no sandboxed
 * command reads or writes it and no file tool writes it.
 */
export function reinConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REIN_CONFIG_DIR) return path.resolve(env.REIN_CONFIG_DIR);
  const base = env.XDG_CONFIG_HOME ? path.resolve(env.XDG_CONFIG_HOME) : path.join(os.homedir(), ".config");
  return path.join(base, "rein");
}

/**
 * Rein's cache dir: `$REIN_CACHE_DIR`, else `$XDG_CACHE_HOME/rein`, else
 * `~/.cache/rein`. It holds the transpiled config files and plugins that the next
 * start runs, so no sandboxed command writes it and no file tool writes it.
 */
export function reinCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.REIN_CACHE_DIR) return path.resolve(env.REIN_CACHE_DIR);
  const base = env.XDG_CACHE_HOME ? path.resolve(env.XDG_CACHE_HOME) : path.join(os.homedir(), ".cache");
  return path.join(base, "rein");
}
