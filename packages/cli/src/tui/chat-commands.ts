/**
 * The terminal UI's slash commands: `/model`, `/mode`, `/help`, `/reload`,
 * `/exit`; the rest (`/tree`, `/cost`, `/fork`, `/label`, `/compact`, `/session`)
 * are the plain chat's own (commands/chat.ts), writing into the transcript.
 *
 * `/model <provider/id | custom id>` resolves the model as the config would and
 * switches the agent between runs (recorded as a `model_change` entry).
 * `/mode <mode>` reloads the plugins with `--permission-mode <mode>` as the flags
 * layer does (so @rein/plugin-permissions is set up afresh with it; grants stay in
 * the session).
 */
import { relative } from "node:path";
import type { ReinConfig } from "@rein/sdk";
import type { Agent } from "../agent/build-agent.js";
import type { LiveReload } from "../agent/live-reload.js";
import { reloadAgent } from "../agent/reload.js";
import { slashCommand } from "../chat/chat.js";
import { PERMISSION_MODES } from "../config/cli-flags.js";
import { resolveModel } from "../config/resolve-model.js";
import type { Terminal } from "../ui/terminal.js";
import type { UsageMark } from "../usage/usage-totals.js";
import { permissionMode } from "./status-line.js";

/** The commands the editor completes after `/` (templates are added by the UI). */
export const COMMANDS: { name: string; description: string; argumentHint?: string }[] = [
  { name: "help", description: "commands and keys" },
  { name: "model", description: "show or switch the model", argumentHint: "[provider/id]" },
  {
    name: "mode",
    description: "show or switch the permission mode",
    argumentHint: `[${PERMISSION_MODES.join("|")}]`,
  },
  { name: "cost", description: "tokens and cost of the last run and of the session" },
  { name: "tree", description: "the session tree, or move the leaf", argumentHint: "[entry] [--summarize]" },
  { name: "skills", description: "the skills this agent can use (/<name> runs one)" },
  { name: "fork", description: "copy the branch into a new session", argumentHint: "[entry]" },
  { name: "label", description: "label an entry", argumentHint: "<entry|.> <text>" },
  { name: "compact", description: "summarise older turns", argumentHint: "[instructions]" },
  { name: "reload", description: "reload the config and plugins" },
  { name: "session", description: "the session id" },
  { name: "exit", description: "leave" },
];

export interface ChatCommands {
  /** Handles the UI's own commands; false when `line` is not one of them. */
  handle(line: string): Promise<boolean>;
  /** A command of the plain chat. */
  builtin(line: string): Promise<void>;
}

const TUI_HELP = `/model [provider/id]       show or switch the model (rein models lists them)
/mode [mode]               show or switch the permission mode: ${PERMISSION_MODES.join(", ")}
keys: Enter sends · Shift-Enter or Ctrl-J new line · ↑/↓ history · Ctrl-O expand tool output
      Ctrl-C stops a run, twice quits · Ctrl-D on an empty line quits
`;

const PERMISSIONS = "@rein/plugin-permissions";

/** The flags layer with the permission mode set to `mode` (replacing an earlier one). */
export function withPermissionMode(flags: ReinConfig | undefined, mode: string): ReinConfig {
  const plugins = (flags?.plugins ?? []).filter(
    (entry) => !(Array.isArray(entry) && entry[0] === PERMISSIONS && "mode" in ((entry[1] as object) ?? {})),
  );
  return { ...flags, plugins: [...plugins, [PERMISSIONS, { mode }]] };
}

export function chatCommands(
  agent: Agent,
  term: Terminal,
  live: LiveReload,
  ui: { lastRun(): UsageMark | undefined; changed(): void; exit(): void },
  where: { cwd: string; configPath?: string | undefined; flags?: ReinConfig | undefined },
): ChatCommands {
  const { c } = term;
  const say = (text: string) => term.err.write(`${text}\n`);
  return {
    async handle(line) {
      const [command, ...words] = line.split(/\s+/);
      switch (command) {
        case "/exit":
        case "/quit":
          ui.exit();
          return true;
        case "/help":
          await slashCommand(agent, term, "/help", ui.lastRun());
          say(TUI_HELP.trimEnd());
          return true;
        case "/skills": {
          const skills = agent.harness.skills;
          if (skills.length === 0) {
            say(
              "no skills (they live in .rein/skills/<name>/SKILL.md; rein skills list shows where Rein looks)",
            );
            return true;
          }
          for (const skill of skills) {
            const shown = relative(where.cwd, skill.path);
            say(
              `${c.bold(`/${skill.name}`)}  ${skill.description}  ${c.dim(`(${skill.source ?? "skill"}: ${shown})`)}`,
            );
          }
          return true;
        }
        case "/reload":
          await live.reload();
          ui.changed();
          return true;
        case "/model": {
          const current = `${agent.harness.model.provider}/${agent.harness.model.id}`;
          if (words.length === 0) {
            say(
              `model ${c.bold(current)} (${agent.model.description}); /model <provider/id> switches, rein models lists them`,
            );
            return true;
          }
          const name = words.join(" ");
          const resolved = await resolveModel({ ...agent.loaded.config, model: name });
          agent.setModel(resolved);
          say(
            `${c.green("✓ model")} ${c.bold(`${resolved.model.provider}/${resolved.model.id}`)} (was ${current})`,
          );
          ui.changed();
          return true;
        }
        case "/mode": {
          if (words.length === 0) {
            say(
              `permission mode ${c.bold(permissionMode(agent))}; /mode <${PERMISSION_MODES.join(" | ")}> switches`,
            );
            return true;
          }
          const mode = words[0] as string;
          if (!(PERMISSION_MODES as readonly string[]).includes(mode))
            throw new Error(`unknown permission mode "${mode}": one of ${PERMISSION_MODES.join(", ")}`);
          const flags = withPermissionMode(where.flags, mode);
          await reloadAgent(agent, { ...where, flags });
          // Later reloads (/reload, rein dev) keep the mode.
          where.flags = flags;
          say(`${c.green("✓ permission mode")} ${c.bold(mode)}`);
          ui.changed();
          return true;
        }
        default:
          return false;
      }
    },
    builtin: (line) => slashCommand(agent, term, line, ui.lastRun()),
  };
}
