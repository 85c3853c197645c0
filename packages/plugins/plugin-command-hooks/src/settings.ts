/**
 * The hook configuration: `hooks` in the agents' own JSON shape
 * (`{ "<Event>": [{ matcher?, hooks: [{ type: "command" | "http", ... }] }] }`),
 * given inline or read from an agent settings file the user points at (Claude
 * Code's `.claude/settings.json`, Gemini CLI's `.gemini/settings.json`).
 *
 * Invariants: Rein's own `rein hook` entries in such a file are skipped (Rein
 * would call itself); a handler type Rein cannot run (`prompt`, `agent`,
 * `mcp_tool`) is refused at load with the event named, never ignored: a team's
 * gate must not vanish silently.
 */
import { readFileSync } from "node:fs";
import { invalidSettings } from "./errors.js";

export interface CommandHandler {
  type: "command";
  command: string;
  /** Seconds (Claude Code's unit); default the plugin's `timeout`. */
  timeout?: number;
}

export interface HttpHandler {
  type: "http";
  url: string;
  headers?: Record<string, string>;
  /** Variables `headers` may interpolate (`$NAME` / `${NAME}`), as in Claude Code. */
  allowedEnvVars?: string[];
  timeout?: number;
}

export type Handler = CommandHandler | HttpHandler;

export interface HookGroup {
  /** A regular expression on the agent-side tool name (`Bash`, `Edit|Write`); absent, "" or "*": every tool. */
  matcher?: string;
  hooks: Handler[];
}

export type HookTable = Record<string, HookGroup[]>;

/** Events this plugin runs, by the agents' names (Gemini CLI's in parentheses in the README). */
export const EVENTS = ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"] as const;
export type CommandHookEvent = (typeof EVENTS)[number];

const GEMINI_NAMES: Readonly<Record<string, CommandHookEvent>> = {
  BeforeTool: "PreToolUse",
  AfterTool: "PostToolUse",
  BeforeAgent: "UserPromptSubmit",
  AfterAgent: "Stop",
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const isReinHook = (command: string) =>
  /\bhook\s+(?:claude-code|codex|gemini)(?:\s|$)/.test(command) && /rein/.test(command);

/** Checks a `hooks` object (inline or from a file) and normalises Gemini CLI's event names. */
export function hookTable(value: unknown, where: string): HookTable {
  if (!isObject(value)) throw invalidSettings(where, '"hooks" must be an object of event lists');
  const table: HookTable = {};
  for (const [name, groups] of Object.entries(value)) {
    if (name === "enabled" || name === "disabled") continue; // Gemini CLI's switches, not events
    const event = GEMINI_NAMES[name] ?? name;
    if (!(EVENTS as readonly string[]).includes(event)) continue; // events Rein has no moment for
    if (!Array.isArray(groups))
      throw invalidSettings(where, `hooks.${name} must be a list of { matcher, hooks } groups`);
    for (const [index, group] of groups.entries()) {
      const at = `hooks.${name}[${index}]`;
      if (!isObject(group) || !Array.isArray(group.hooks))
        throw invalidSettings(where, `${at} must be { matcher?, hooks: [...] }`);
      if (group.matcher !== undefined && typeof group.matcher !== "string")
        throw invalidSettings(where, `${at}.matcher must be a string`);
      if (typeof group.matcher === "string" && group.matcher !== "*") {
        try {
          new RegExp(group.matcher);
        } catch (error) {
          throw invalidSettings(where, `${at}.matcher is not a regular expression`, error);
        }
      }
      const handlers: Handler[] = [];
      for (const [n, handler] of (group.hooks as unknown[]).entries()) {
        const place = `${at}.hooks[${n}]`;
        if (!isObject(handler)) throw invalidSettings(where, `${place} must be an object`);
        if (handler.timeout !== undefined && (typeof handler.timeout !== "number" || !(handler.timeout > 0)))
          throw invalidSettings(where, `${place}.timeout must be a positive number of seconds`);
        if (handler.type === "command") {
          if (typeof handler.command !== "string" || handler.command.trim() === "")
            throw invalidSettings(where, `${place}.command must be a non-empty string`);
          if (isReinHook(handler.command)) continue;
          handlers.push(handler as unknown as CommandHandler);
        } else if (handler.type === "http") {
          if (typeof handler.url !== "string" || !/^https?:\/\//.test(handler.url))
            throw invalidSettings(where, `${place}.url must be an http(s) URL`);
          handlers.push(handler as unknown as HttpHandler);
        } else {
          throw invalidSettings(
            where,
            `${place}: handler type ${JSON.stringify(handler.type)} cannot run in Rein (command and http can)`,
          );
        }
      }
      if (handlers.length > 0) {
        const normalised: HookGroup = { hooks: handlers };
        if (typeof group.matcher === "string") normalised.matcher = group.matcher;
        table[event] = [...(table[event] ?? []), normalised];
      }
    }
  }
  return table;
}

export function readSettingsFile(file: string): HookTable {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw invalidSettings(file, `cannot read it as JSON: ${(error as Error).message}`, error);
  }
  if (!isObject(value)) throw invalidSettings(file, "expected a JSON object");
  return value.hooks === undefined ? {} : hookTable(value.hooks, file);
}

/** The groups of `event` whose matcher takes `toolName` (every group when there is no tool). */
export function matching(table: HookTable, event: CommandHookEvent, toolName?: string): Handler[] {
  return (table[event] ?? []).flatMap((group) => {
    const matcher = group.matcher ?? "";
    if (toolName === undefined || matcher === "" || matcher === "*") return group.hooks;
    return new RegExp(`^(?:${matcher})$`).test(toolName) ? group.hooks : [];
  });
}
