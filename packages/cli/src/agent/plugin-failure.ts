/**
 * A plugin that fails while loading (bad options, a throwing `setup`, a tool name
 * taken twice) is reported as one line that names the config file and the line of
 * its entry, the entry (`plugins[2]`) and the plugin. Tool packs have no name of
 * their own (the SDK calls them `tools[i]`); here they are called by the module
 * specifier they were loaded from.
 */
import { isReinPlugin } from "@rein/sdk";
import type { LoadedConfig } from "../config/load-config.js";
import type { ResolvedEntry } from "../config/resolve-plugins.js";
import { lineOfKey } from "../config/validate-config.js";
import { type CliError, pluginError } from "../errors.js";

const firstLine = (text: string) => text.split("\n")[0]?.trim() ?? "";

/** The name the plugin host gives entry `index`: the plugin's name, or `tools[index]` for a tool pack. */
function hostName(entry: ResolvedEntry, index: number): string {
  const value = Array.isArray(entry.entry) && isReinPlugin(entry.entry[0]) ? entry.entry[0] : entry.entry;
  return isReinPlugin(value) ? value.name : `tools[${index}]`;
}

/** What to call an entry in messages: a tool pack by its specifier, a plugin by its name. */
export function displayName(entry: ResolvedEntry, index: number): string {
  const name = hostName(entry, index);
  return name === `tools[${index}]` && entry.source !== "inline" ? entry.source : name;
}

/** The 1-based line of entry `index` in the config text: where its specifier is written, else the `plugins` key. */
export function lineOfEntry(loaded: LoadedConfig, entry: ResolvedEntry | undefined): number | undefined {
  const text = loaded.text;
  const pluginsLine = lineOfKey(text, "plugins");
  if (!text || !entry || entry.source === "inline") return pluginsLine;
  const lines = text.split("\n");
  const from = (pluginsLine ?? 1) - 1;
  for (let i = from; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.includes(`"${entry.source}"`) || line.includes(`'${entry.source}'`)) return i + 1;
  }
  return pluginsLine;
}

export function pluginSetupError(error: unknown, loaded: LoadedConfig, entries: ResolvedEntry[]): CliError {
  const failed = (error as { plugin?: unknown }).plugin;
  const index = entries.findIndex((entry, i) => hostName(entry, i) === failed);
  let message = firstLine(error instanceof Error ? error.message : String(error));
  // `plugin "tools[1]"` -> `tool pack "./tools.ts"`, for every pack the message mentions.
  message = message.replace(/plugin "tools\[(\d+)\]"/g, (whole, i: string) => {
    const entry = entries[Number(i)];
    return entry && entry.source !== "inline" ? `tool pack "${entry.source}"` : whole;
  });
  const entry = index >= 0 ? entries[index] : undefined;
  const line = lineOfEntry(loaded, entry);
  return pluginError(index >= 0 ? `plugins[${index}]: ${message}` : message, {
    ...(loaded.file ? { file: loaded.file } : {}),
    ...(line ? { line } : {}),
    ...(entry ? { plugin: displayName(entry, index) } : {}),
    cause: error,
  });
}
