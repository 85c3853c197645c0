/**
 * What to call a loaded entry in messages: a plugin by its name, a tool pack (which
 * has no name of its own; the SDK calls it `tools[i]`) by the module specifier it was
 * loaded from. Load failures are located by `config/entry-location.ts`.
 */
import { isReinPlugin } from "@rein/sdk";
import type { ResolvedEntry } from "../config/resolve-plugins.js";

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
