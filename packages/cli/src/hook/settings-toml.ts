/**
 * Rein's entries in Codex's `config.toml` (`[[hooks.<Event>]]` groups with
 * `[[hooks.<Event>.hooks]]` handlers). The user's file is kept byte for byte:
 * Rein's groups go in one block between two marker comments, appended
 * (TOML appends `[[...]]` tables wherever they stand), and uninstalling
 * removes that block only. smol-toml parses the file before and after, so an
 * edit that would break it, or lose a hook that was there, is refused
 * instead of written; a TOML serializer would have dropped the user's comments
 * and layout, which is why the file is not re-serialised.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { parse, stringify } from "smol-toml";
import { configError } from "../errors.js";
import type { HookEntry } from "./settings-json.js";

const BEGIN = "# >>> rein hook install (managed by Rein; `rein hook install codex --uninstall` removes it)";
const END = "# <<< rein hook install";

function parsed(file: string, text: string, when: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (error) {
    throw configError(`${file}: not valid TOML ${when} (${(error as Error).message})`, { file });
  }
}

function withoutBlock(text: string): { text: string; removed: boolean } {
  const start = text.indexOf(BEGIN);
  if (start === -1) return { text, removed: false };
  const end = text.indexOf(END, start);
  const stop = end === -1 ? text.length : end + END.length;
  const before = text.slice(0, start).replace(/\n*$/, "\n");
  const after = text.slice(stop).replace(/^\n+/, "");
  return { text: (before.trim() === "" ? "" : before) + after, removed: true };
}

/** Hook handlers per event, counted, to check an edit kept every one that was there. */
function handlerCount(config: Record<string, unknown>): number {
  const hooks = config.hooks;
  if (typeof hooks !== "object" || hooks === null) return 0;
  let count = 0;
  for (const groups of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      const handlers = (group as { hooks?: unknown }).hooks;
      count += Array.isArray(handlers) ? handlers.length : 0;
    }
  }
  return count;
}

function block(entries: readonly HookEntry[]): string {
  const lines = [BEGIN];
  for (const entry of entries) {
    // smol-toml writes each value (quoting, escapes); the table headers are ours.
    const group = stringify(entry.group).trim();
    const hook = stringify(entry.hook).trim();
    lines.push(`[[hooks.${entry.event}]]`);
    if (group !== "") lines.push(group);
    lines.push(`[[hooks.${entry.event}.hooks]]`, hook);
  }
  lines.push(END);
  return `${lines.join("\n")}\n`;
}

function write(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.rein-${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, file);
}

export function installToml(file: string, entries: readonly HookEntry[]): { kept: number } {
  const original = existsSync(file) ? readFileSync(file, "utf8") : "";
  parsed(file, original, "before the change");
  const base = withoutBlock(original).text;
  const kept = handlerCount(parsed(file, base, "without Rein's entries"));
  const separator = base === "" || base.endsWith("\n\n") ? "" : base.endsWith("\n") ? "\n" : "\n\n";
  const next = `${base}${separator}${block(entries)}`;
  const after = parsed(file, next, "with Rein's entries (is hooks.<event> written as an inline array?)");
  if (handlerCount(after) !== kept + entries.length)
    throw configError(`${file}: adding Rein's hooks would change the other hooks; not written`, { file });
  write(file, next);
  return { kept };
}

export function uninstallToml(file: string): { removed: number } {
  if (!existsSync(file)) return { removed: 0 };
  const original = readFileSync(file, "utf8");
  const { text, removed } = withoutBlock(original);
  if (!removed) return { removed: 0 };
  const before = handlerCount(parsed(file, original, "before the change"));
  const after = handlerCount(parsed(file, text, "without Rein's entries"));
  write(file, text);
  return { removed: before - after };
}
