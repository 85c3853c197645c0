/**
 * Rein's entries in a JSON agent settings file (Claude Code's
 * `.claude/settings.json`, Gemini CLI's `.gemini/settings.json`): `hooks.<Event>`
 * is a list of `{ matcher, hooks: [{ type: "command", command, ... }] }`
 * groups. Installing adds one group per event and keeps every other key and
 * hook as it was; uninstalling removes only groups whose commands are Rein's.
 *
 * Invariant: a file that is not a JSON object, or whose `hooks` is not the
 * documented shape, is refused with its path named, never rewritten.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { configError } from "../errors.js";

type Json = Record<string, unknown>;

export interface HookEntry {
  event: string;
  /** The group's fields besides `hooks` (`matcher`). */
  group: Json;
  /** The hook's fields (`type`, `command`, `timeout`, ...). */
  hook: Json;
}

/** Whether a command is one `rein hook install` wrote (any agent). */
export const isReinCommand = (command: unknown): boolean =>
  typeof command === "string" &&
  /rein(?:-hook)?(?:\.js|\.mjs)?['"]?\s+hook\s+(?:claude-code|codex|gemini)(?:\s|$)/.test(command);

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function readSettings(file: string): Json {
  if (!existsSync(file)) return {};
  const text = readFileSync(file, "utf8");
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw configError(`${file}: not JSON (${(error as Error).message}); fix it before rein hook install`, {
      file,
    });
  }
  if (!isObject(value)) throw configError(`${file}: expected a JSON object`, { file });
  if (value.hooks !== undefined && !isObject(value.hooks))
    throw configError(`${file}: "hooks" must be an object of event lists`, { file });
  return value;
}

function groupsOf(hooks: Json, event: string, file: string): Json[] {
  const groups = hooks[event] ?? [];
  if (!Array.isArray(groups) || !groups.every(isObject))
    throw configError(`${file}: "hooks.${event}" must be a list of { matcher, hooks } groups`, { file });
  return groups;
}

const isReinGroup = (group: Json): boolean =>
  Array.isArray(group.hooks) &&
  group.hooks.length > 0 &&
  group.hooks.every((hook) => isObject(hook) && isReinCommand(hook.command));

function writeSettings(file: string, settings: Json): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.rein-${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(settings, null, 2)}\n`);
  renameSync(temp, file); // whole or not at all
}

/** Adds Rein's entries (replacing Rein's previous ones); returns how many other hooks were kept. */
export function installJson(file: string, entries: readonly HookEntry[]): { kept: number } {
  const settings = readSettings(file);
  const hooks: Json = isObject(settings.hooks) ? { ...settings.hooks } : {};
  let kept = 0;
  for (const event of new Set(entries.map((entry) => entry.event))) {
    const others = groupsOf(hooks, event, file).filter((group) => !isReinGroup(group));
    kept += others.length;
    const ours = entries
      .filter((entry) => entry.event === event)
      .map((entry) => ({ ...entry.group, hooks: [entry.hook] }));
    hooks[event] = [...others, ...ours];
  }
  writeSettings(file, { ...settings, hooks });
  return { kept };
}

/** Removes Rein's groups only; returns how many were removed. */
export function uninstallJson(file: string): { removed: number } {
  if (!existsSync(file)) return { removed: 0 };
  const settings = readSettings(file);
  if (!isObject(settings.hooks)) return { removed: 0 };
  const hooks: Json = { ...settings.hooks };
  let removed = 0;
  for (const event of Object.keys(hooks)) {
    const groups = groupsOf(hooks, event, file);
    const others = groups.filter((group) => !isReinGroup(group));
    removed += groups.length - others.length;
    if (others.length === 0) delete hooks[event];
    else hooks[event] = others;
  }
  if (removed > 0) writeSettings(file, { ...settings, hooks });
  return { removed };
}
