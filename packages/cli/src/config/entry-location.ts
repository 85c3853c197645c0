/**
 * Where in the user's files a plugin load failure lies: the config line of the
 * `plugins[i]` entry (and of the offending option key inside it), and for a
 * failure inside a plugin's own code, the line of the plugin file. Invariant:
 * only lines actually found in the text are reported; a guess is never printed.
 */
import { fileURLToPath } from "node:url";
import { pluginError } from "../errors.js";
import type { LoadedConfig } from "./load-config.js";
import type { ResolvedEntry } from "./resolve-plugins.js";
import { lineOfKey } from "./validate-config.js";

interface SdkFailure {
  message: string;
  plugin?: string;
  index?: number;
  path?: string;
  cause?: unknown;
  stack?: string;
}

/** 1-based line of the entry `plugins[index]` (its specifier), falling back to the `plugins` key. */
export function lineOfEntry(text: string | undefined, source: string | undefined): number | undefined {
  const pluginsLine = lineOfKey(text, "plugins");
  if (!text || !pluginsLine || !source || source === "inline") return pluginsLine;
  const lines = text.split("\n");
  for (let i = pluginsLine - 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.includes(`"${source}"`) || line.includes(`'${source}'`) || line.includes(`\`${source}\``)) {
      return i + 1;
    }
  }
  return pluginsLine;
}

/** The line of an option key (last named segment of `path`) at or after the entry's line. */
function lineOfOption(text: string | undefined, from: number, path: string): number | undefined {
  const key = path
    .split("/")
    .filter((segment) => segment !== "" && !/^\d+$/.test(segment))
    .at(-1);
  if (!text || !key) return undefined;
  const rest = text
    .split("\n")
    .slice(from - 1)
    .join("\n");
  const offset = lineOfKey(rest, key);
  return offset === undefined ? undefined : from + offset - 1;
}

/** The first line of `file` mentioned in an error's stack (or its causes'). */
export function lineInFile(error: unknown, file: string): number | undefined {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const stack = (current as { stack?: unknown }).stack;
    if (typeof stack === "string") {
      for (const match of stack.matchAll(/((?:file:\/\/)?\/[^\s():]+):(\d+):\d+/g)) {
        const path = (match[1] as string).startsWith("file://")
          ? fileURLToPath(match[1] as string)
          : match[1];
        if (path === file) return Number(match[2]);
      }
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

const firstLine = (text: string) => text.split("\n")[0]?.trim() ?? "";

/**
 * A plugin load failure from the SDK, as a one-line CLI error pointing at the config
 * entry at fault. Tool packs have no name of their own (the SDK calls them
 * `tools[i]`); the message calls them by the module specifier they were loaded from.
 */
export function pluginLoadError(loaded: LoadedConfig, plugins: readonly ResolvedEntry[], error: unknown) {
  const failure = error as SdkFailure;
  const index = typeof failure.index === "number" ? failure.index : undefined;
  const message = firstLine(String(failure.message ?? error)).replace(
    /plugin "tools\[(\d+)\]"/g,
    (whole, i: string) => {
      const named = plugins[Number(i)];
      return named && named.source !== "inline" ? `tool pack "${named.source}"` : whole;
    },
  );
  const entry = index === undefined ? undefined : plugins[index];
  // The entry's own layer file (the user, local or managed config), else the project config.
  const file = entry?.at ? entry.at.file : loaded.file;
  const text = entry?.at ? entry.at.text : loaded.text;
  const entryLine = index === undefined ? undefined : lineOfEntry(text, entry?.source);
  const optionLine =
    entryLine !== undefined && failure.path ? lineOfOption(text, entryLine, failure.path) : undefined;
  // Skip when the message already says where (the SDK's unknown-hook error does).
  const inPlugin =
    entry?.file && !message.includes(`${entry.file}:`) ? lineInFile(error, entry.file) : undefined;
  const line = optionLine ?? entryLine;
  return pluginError(`${index === undefined ? "" : `plugins[${index}]: `}${message}`, {
    ...(file ? { file } : {}),
    ...(line ? { line } : {}),
    ...(failure.plugin ? { plugin: failure.plugin } : {}),
    ...(entry?.file && inPlugin ? { hint: `in ${entry.file}:${inPlugin}` } : {}),
    cause: error,
  });
}
