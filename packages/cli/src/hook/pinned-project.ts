/**
 * Which project's Rein stack decides a hook event. An agent's working
 * directory can leave the project (Claude Code keeps a `cd /tmp` across Bash
 * calls, and its hook events then carry `cwd: "/tmp"`); if the stack were
 * found from there, the project's rules would no longer apply. So the hook
 * is pinned to a project: `--project <dir>` (what `rein hook install` writes
 * for a project's settings), else the agent's own variable for hooks
 * (`CLAUDE_PROJECT_DIR`, set by Claude Code 2.1.332; `GEMINI_PROJECT_DIR`, set
 * by Gemini CLI 0.61.0 to its fixed working directory; Codex 0.171.0 sets
 * none, and its event `cwd` is its session's, which a command's `cd` does not
 * move).
 *
 * Invariants: an event whose `cwd` is outside the pinned project (by real
 * path) is decided with the pinned project's stack, its paths still resolved
 * against the event's `cwd`; an event inside it is decided as before (the
 * config found from its `cwd`'s real path upward, so a nested project keeps its
 * own rules). A pin that is not an absolute path or not an existing folder is an
 * error (the hook blocks), never a guess.
 */
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { usageError } from "../errors.js";
import type { AgentName } from "./agent-protocols.js";

/** The variable each agent sets for its hooks that names its project, if any. */
export const PROJECT_ENV: Readonly<Record<AgentName, string | undefined>> = {
  "claude-code": "CLAUDE_PROJECT_DIR",
  codex: undefined,
  gemini: "GEMINI_PROJECT_DIR",
};

/** The pinned project of one hook command line, or undefined (the event's `cwd` decides, as before). */
export function pinnedProject(
  agent: AgentName,
  option: string | undefined,
  env: NodeJS.ProcessEnv,
): string | undefined {
  const variable = PROJECT_ENV[agent];
  const [given, from] =
    option !== undefined
      ? [option, "--project"]
      : variable !== undefined && env[variable]
        ? [env[variable], `$${variable}`]
        : [undefined, ""];
  if (given === undefined) return undefined;
  if (!isAbsolute(given)) throw usageError(`${from} ${given}: expected an absolute path`);
  if (!statSync(given, { throwIfNoEntry: false })?.isDirectory())
    throw usageError(`${from} ${given}: no such folder`, "run rein hook install again from the project");
  return resolve(given);
}

const real = (dir: string): string => {
  try {
    return realpathSync(dir);
  } catch {
    return resolve(dir);
  }
};

/** Whether `dir` is `project` or inside it, comparing real paths (a symlink into the project is inside). */
export function isInside(project: string, dir: string): boolean {
  const rel = relative(real(project), real(dir));
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * Where the config is searched from for an event in `cwd`: the pinned project when
 * `cwd` left it; inside it, `cwd`'s real path (searched upward as written, a symlink
 * from another project into this one would find the other project's config first).
 */
export function configSearchDir(project: string | undefined, cwd: string): string {
  if (project === undefined) return cwd;
  return isInside(project, cwd) ? real(cwd) : project;
}
