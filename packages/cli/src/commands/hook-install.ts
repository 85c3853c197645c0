/**
 * `rein hook install <agent> [--project | --user] [--uninstall]`: Rein's hook
 * entries in the agent's own settings: Claude Code `.claude/settings.json`,
 * Codex `.codex/config.toml` (`$CODEX_HOME/config.toml` with --user), Gemini
 * CLI `.gemini/settings.json`. Merged with what is there (every other key and
 * hook kept); `--uninstall` removes Rein's entries only.
 *
 * The command written is this very `rein` (its Node and script, absolute), so
 * the hook runs the same Rein whatever the agent's PATH; `--command` sets
 * another (`rein` when it is installed globally). In a project's settings it
 * ends with `--project <the project>` (hook/pinned-project.ts), so the project's
 * stack decides even when the agent's working directory leaves the project.
 */
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { findConfig } from "../config/find-config.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { type AgentName, agentEventName, GATING_EVENTS, INSTALLED_EVENTS } from "../hook/agent-protocols.js";
import { agentName } from "../hook/hook-options.js";
import { type HookEntry, installJson, isReinCommand, uninstallJson } from "../hook/settings-json.js";
import { installToml, uninstallToml } from "../hook/settings-toml.js";
import { terminal } from "../ui/terminal.js";

export interface HookInstallOptions {
  user?: boolean;
  project?: boolean;
  uninstall?: boolean;
  command?: string;
  /** Seconds the agent gives the hook (default 30). */
  timeout?: string;
}

/** POSIX shell quoting (every agent runs the command through `sh -c` / bash on POSIX). */
const quote = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;

/**
 * This Rein's hook client, absolute (bin/rein-hook.js: Node built-ins only; it asks
 * the warm hook daemon, else decides with the full `rein` in process, see
 * hook-client.ts). `--liftoff-only`: when a call is decided in process (the first
 * one, or after a change), V8's optimising tier for the shell parser's WASM would
 * cost it ~0.5 s of background compiling and hundreds of MiB (measured: 3.0 s /
 * 580 MiB against 1.5 s / 112 MiB); the daemon inherits the flag, where it costs
 * nothing measurable per decision.
 */
export function reinCommand(agent: AgentName): string {
  // The package's own bin (dist/commands -> bin/rein-hook.js), whichever way this rein was started.
  const script = fileURLToPath(new URL("../../bin/rein-hook.js", import.meta.url));
  return `${quote(process.execPath)} --liftoff-only ${quote(script)} hook ${agent}`;
}

/** The settings file of `agent` at the chosen scope. */
export function settingsFile(agent: AgentName, scope: "project" | "user", project: string): string {
  const env = process.env;
  switch (agent) {
    case "claude-code":
      return scope === "user"
        ? join(env.CLAUDE_CONFIG_DIR ?? join(homedir(), ".claude"), "settings.json")
        : join(project, ".claude", "settings.json");
    case "codex":
      return scope === "user"
        ? join(env.CODEX_HOME ?? join(homedir(), ".codex"), "config.toml")
        : join(project, ".codex", "config.toml");
    case "gemini":
      return scope === "user"
        ? join(homedir(), ".gemini", "settings.json")
        : join(project, ".gemini", "settings.json");
  }
}

export function hookEntries(agent: AgentName, command: string, timeoutSeconds: number): HookEntry[] {
  return INSTALLED_EVENTS[agent].map((event) => {
    const hook: Record<string, unknown> = {
      type: "command",
      command,
      // Gemini CLI counts milliseconds; Claude Code and Codex seconds.
      timeout: agent === "gemini" ? timeoutSeconds * 1000 : timeoutSeconds,
    };
    // Claude Code lets a failed or timed-out hook's call run unless told to block.
    if (agent === "claude-code" && GATING_EVENTS.includes(event)) hook.onFailure = "block";
    return { event: agentEventName(agent, event) as string, group: {}, hook };
  });
}

export async function hookInstallCommand(
  agentArg: string,
  options: HookInstallOptions,
  globals: GlobalOptions,
): Promise<number> {
  const agent = agentName(agentArg);
  if (options.user && options.project) throw usageError("--user and --project: choose one");
  const scope = options.user ? "user" : "project";
  const timeout = options.timeout === undefined ? 30 : Number(options.timeout);
  if (!Number.isInteger(timeout) || timeout <= 0)
    throw usageError(`--timeout ${options.timeout}: expected whole seconds`);
  const config = globals.config ? resolve(globals.cwd, globals.config) : findConfig(globals.cwd);
  const project = config ? dirname(config) : globals.cwd;
  const file = settingsFile(agent, scope, project);
  const term = terminal();
  const toml = agent === "codex";
  if (options.uninstall) {
    const { removed } = toml ? uninstallToml(file) : uninstallJson(file);
    term.err.write(`${file}: removed ${removed} Rein hook entr${removed === 1 ? "y" : "ies"}\n`);
    return ExitCode.ok;
  }
  const given = options.command ?? reinCommand(agent);
  if (!isReinCommand(given))
    throw usageError(
      `--command ${JSON.stringify(given)}: it must run "rein hook ${agent}" (that is how --uninstall finds it)`,
    );
  // A project's hook is pinned to it: a `cd` out of the project does not take its rules off.
  const command =
    scope === "project" && !/\s--project[\s=]/.test(given) ? `${given} --project ${quote(project)}` : given;
  const entries = hookEntries(agent, command, timeout);
  const { kept } = toml ? installToml(file, entries) : installJson(file, entries);
  term.err.write(
    `${file}: Rein decides ${entries.map((entry) => entry.event).join(", ")} for ${agent} (${kept} other hook entr${kept === 1 ? "y" : "ies"} kept)\n`,
  );
  if (!config)
    term.err.write(
      `  no rein.config found from ${globals.cwd}: every call will be blocked until there is one (rein init)\n`,
    );
  if (agent === "codex")
    term.err.write(
      "  Codex runs project hooks only in a trusted project (or with --dangerously-bypass-hook-trust)\n",
    );
  return ExitCode.ok;
}
