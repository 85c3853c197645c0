/**
 * Where in the user's files a plugin load failure lies: the config line of the
 * `plugins[i]` entry (and of the offending option key inside it), and for a
 * failure inside a plugin's own code, the line of the plugin file. Invariant:
 * only lines actually found in the text are reported; a guess is never printed.
 */
import { fileURLToPath } from "node:url";
import { pluginError } from "../errors.js";
import type { LoadedConfig } from "./load-config.js";
import { type LayerName, type OriginTree, uniformLayer } from "./merge-config.js";
import type { EntryPlace, ResolvedEntry } from "./resolve-plugins.js";
import { lineOfKey } from "./validate-config.js";

interface SdkFailure {
  message: string;
  plugin?: string;
  index?: number;
  path?: string;
  cause?: unknown;
  stack?: string;
}

/**
 * 1-based line of a `plugins` entry naming `source` (the `occurrence`-th such entry,
 * from 0), falling back to the `plugins` key.
 */
export function lineOfEntry(
  text: string | undefined,
  source: string | undefined,
  occurrence = 0,
): number | undefined {
  const pluginsLine = lineOfKey(text, "plugins");
  if (!text || !pluginsLine || !source || source === "inline") return pluginsLine;
  const lines = text.split("\n");
  let seen = 0;
  for (let i = pluginsLine - 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.includes(`"${source}"`) || line.includes(`'${source}'`) || line.includes(`\`${source}\``)) {
      if (seen++ === occurrence) return i + 1;
    }
  }
  return pluginsLine;
}

/**
 * The line of an option (a JSON pointer such as `/rules/1/decision`) at or after the
 * entry's line: each named segment is the next line defining that key; after an
 * index `n`, the key's `n+1`-th definition (the items of an option list are written
 * one after another). Stops at the last segment it could find (a missing option).
 */
function lineOfOption(text: string | undefined, from: number, path: string): number | undefined {
  if (!text) return undefined;
  const lines = text.split("\n");
  let at = from - 1;
  let found: number | undefined;
  let skip = 0;
  for (const segment of path.split("/").slice(1)) {
    if (/^\d+$/.test(segment)) {
      skip = Number(segment);
      continue;
    }
    let line = -1;
    for (let i = at; i < lines.length; i++) {
      if (lineOfKey(lines[i], segment) === undefined) continue;
      if (skip-- === 0) {
        line = i;
        break;
      }
    }
    if (line === -1) break;
    found = line + 1;
    at = line;
    skip = 0;
  }
  return found;
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
 * The layer entry a failure belongs to. A bad option belongs to the layer that wrote
 * that value (options of one plugin named in several layers are merged), with the
 * option's pointer as that file writes it; any other failure to the entry whose code
 * runs (the managed layer's when it names the plugin, else the lowest layer's:
 * resolve-plugins.ts).
 */
export function placeOfFailure(
  entry: ResolvedEntry,
  optionPath: string | undefined,
): { place: EntryPlace; optionPath?: string } | undefined {
  const places = entry.places ?? [];
  if (optionPath !== undefined && entry.optionOrigins !== undefined) {
    const found = layerAtPointer(entry.optionOrigins, optionPath);
    const place = found && places.find((candidate) => candidate.layer === found.layer);
    if (found && place) return { place, optionPath: found.pointer };
  }
  const place = places.find((candidate) => candidate.layer === "managed") ?? places[0];
  return place && { place };
}

/**
 * The layer that wrote the value at a JSON pointer (`/rules/0/decision`) of merged
 * options, and the same pointer in that layer's own options: merged arrays put the
 * higher layer's items first, so `/rules/3` may be `/rules/1` of the file. The layer
 * is the leaf's, or for a part that does not exist (a missing required option) the
 * deepest existing part's, when one layer wrote all of it.
 */
export function layerAtPointer(
  origins: OriginTree,
  pointer: string,
): { layer: LayerName; pointer: string } | undefined {
  let node: OriginTree = origins;
  const segments = pointer === "" ? [] : pointer.split("/").slice(1);
  const written: string[] = [];
  for (const raw of segments) {
    if (typeof node === "string") break;
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    let next: OriginTree | undefined;
    let inFile = raw;
    if (Array.isArray(node)) {
      const at = Number(segment);
      next = node[at];
      const layer = next === undefined ? undefined : uniformLayer(next);
      // One layer's items sit together, in the file's order: count that layer's items before it.
      if (layer !== undefined)
        inFile = String(node.slice(0, at).filter((item) => uniformLayer(item) === layer).length);
    } else {
      next = (node as Record<string, OriginTree>)[segment];
    }
    if (next === undefined) break;
    written.push(inFile);
    node = next;
  }
  const layer = uniformLayer(node);
  if (layer === undefined) return undefined;
  const tail = segments.slice(written.length);
  return { layer, pointer: [...written, ...tail].map((segment) => `/${segment}`).join("") };
}

const SDK_ENTRY = /^plugins\[\d+\]/;

const LAYER_LABEL: Record<LayerName, string> = {
  user: "user config",
  project: "project config",
  local: "local config",
  flags: "command-line flags",
  managed: "managed config",
};

/**
 * A plugin load failure from the SDK, as a one-line CLI error pointing at the config
 * entry at fault: the file of the layer that wrote it, the entry's index in that
 * file's own `plugins` (not the merged list), the option as that file writes it, and
 * its line. Tool packs have no name of their own (the SDK calls them `tools[i]`); the
 * message calls them by the module specifier they were loaded from.
 */
export function pluginLoadError(loaded: LoadedConfig, plugins: readonly ResolvedEntry[], error: unknown) {
  const failure = error as SdkFailure;
  const merged = typeof failure.index === "number" ? failure.index : undefined;
  const entry = merged === undefined ? undefined : plugins[merged];
  const found = entry ? placeOfFailure(entry, failure.path) : undefined;
  const place = found?.place;
  const optionPath = found?.optionPath ?? failure.path;
  let message = firstLine(String(failure.message ?? error)).replace(
    /plugin "tools\[(\d+)\]"/g,
    (whole, i: string) => {
      const named = plugins[Number(i)];
      return named && named.source !== "inline" ? `tool pack "${named.source}"` : whole;
    },
  );
  if (failure.path && optionPath !== failure.path)
    message = message.replace(`option ${failure.path} `, `option ${optionPath} `);
  // Without layers (a config built in code) the entry is the project file's, at its merged index.
  const file = place ? place.file : loaded.file;
  const text = place ? place.text : loaded.text;
  const index = place ? place.index : merged;
  const entryLine =
    index === undefined ? undefined : lineOfEntry(text, place?.source ?? entry?.source, place?.occurrence);
  const optionLine =
    entryLine !== undefined && optionPath ? lineOfOption(text, entryLine, optionPath) : undefined;
  // Skip when the message already says where (the SDK's unknown-hook error does).
  const inPlugin =
    entry?.file && !message.includes(`${entry.file}:`) ? lineInFile(error, entry.file) : undefined;
  const line = optionLine ?? entryLine;
  // The SDK numbers the merged list; the entry is named by its position in its own file.
  const described =
    index === undefined
      ? message
      : SDK_ENTRY.test(message)
        ? message.replace(SDK_ENTRY, `plugins[${index}]`)
        : `plugins[${index}]: ${message}`;
  const fileless = place && !place.file ? `${LAYER_LABEL[place.layer]}: ` : "";
  return pluginError(`${fileless}${described}`, {
    ...(file ? { file } : {}),
    ...(line ? { line } : {}),
    ...(place ? { layer: place.layer } : {}),
    ...(index !== undefined ? { index } : {}),
    ...(failure.plugin ? { plugin: failure.plugin } : {}),
    ...(entry?.file && inPlugin ? { hint: `in ${entry.file}:${inPlugin}` } : {}),
    cause: error,
  });
}
