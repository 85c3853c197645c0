/**
 * Turns every layer's `plugins` entries into loaded plugins and tool packs, and
 * merges them. A string is a relative path (from that layer's folder) or an npm
 * package name; `[specifier, options]` adds options.
 *
 * Invariants: a failure names the entry (`plugins[2]`), the specifier, the layer's
 * file and line, and where it was looked for. The same plugin (by name) named in
 * several layers is loaded once, its options merged as merge-config.ts says (arrays
 * of rules concatenated, so a managed deny stays in the list), at the place the
 * lowest layer gave it; a plugin that declares a `grantsFile` option is given the
 * local layer's file, and a layer that sets one is an error (grants stay bound to
 * the project they were made in). A plugin the managed layer names runs the code
 * the managed layer resolved, from Rein's own installation or the managed folder
 * (never the project's node_modules), so a project module or package that takes
 * the same name cannot stand in for it.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AnyAgentTool,
  type AnyReinPlugin,
  isAgentToolLike,
  isReinPlugin,
  type PluginHostEntry,
} from "@rein/sdk";
import { CliError, pluginError, usageError } from "../errors.js";
import { SHELL_PLUGIN } from "./cli-flags.js";
import { lineOfEntry } from "./entry-location.js";
import { LOCAL_CONFIG, localConfigFile } from "./layers.js";
import type { ConfigLayer, LoadedConfig } from "./load-config.js";
import { isPlainObject, type LayerName, mergeValues, type OriginTree, originOf } from "./merge-config.js";
import { lineFromError } from "./module-loader.js";

/** First-party plugins the CLI ships with: found from its own folder when a layer's folder has no copy. */
const CLI_DIR = dirname(fileURLToPath(import.meta.url));

const SOURCE_EXTENSIONS = ["", ".ts", ".mts", ".js", ".mjs", "/index.ts", "/index.js"];

const isPathSpecifier = (specifier: string) =>
  specifier.startsWith("./") || specifier.startsWith("../") || isAbsolute(specifier);

/** One layer's entry for a plugin: the layer, its file and text, and the entry's index in that file's `plugins`. */
export interface EntryPlace {
  layer: LayerName;
  file: string | undefined;
  text: string | undefined;
  /** The position in that layer's own `plugins` list (not the merged one). */
  index: number;
  /** The specifier written there (`inline` for a plugin object). */
  source: string;
  /** How many earlier entries of that layer name the same specifier (to find its line). */
  occurrence: number;
}

export interface ResolvedEntry {
  entry: PluginHostEntry;
  /** Where it came from, for `rein plugins`. */
  source: string;
  /** The module file it was loaded from (for locating failures in the plugin's code). */
  file?: string;
  /** The layers that named it, lowest first. */
  layers?: LayerName[];
  /** Where each of those layers named it, lowest first (for locating failures in the right file). */
  places?: EntryPlace[];
  /** Which layer each option came from. */
  optionOrigins?: OriginTree;
}

/** What resolving one layer's entries needs. */
type LayerSource = Pick<LoadedConfig, "file" | "dir" | "text" | "loader"> & {
  config: Pick<LoadedConfig["config"], "plugins">;
  /** The layer's name, for errors. */
  layer?: LayerName;
  /** Bare specifiers not found from `dir` are looked for from these folders next. */
  fallbackDirs?: string[];
  /** The managed layer: bare specifiers resolve from Rein's installation before its folder. */
  managed?: boolean;
};

export async function resolvePlugins(loaded: LoadedConfig): Promise<ResolvedEntry[]> {
  const layers: ConfigLayer[] = loaded.layers ?? [
    { name: "project", file: loaded.file, dir: loaded.dir, config: loaded.config, text: loaded.text },
  ];
  const merged: ResolvedEntry[] = [];
  const byKey = new Map<string, ResolvedEntry>();
  for (const layer of layers) {
    const source: LayerSource = {
      ...layer,
      layer: layer.name,
      loader: loaded.loader,
      // A managed entry resolves from the managed folder and Rein's own installation
      // only: a package planted in the project's node_modules never stands in for it.
      fallbackDirs: layer.name === "managed" ? [] : [loaded.dir].filter((d) => d !== layer.dir),
      managed: layer.name === "managed",
    };
    for (const [index, entry] of (await resolveLayer(source)).entries()) {
      const place = placeOf(layer, index, entry.source);
      const options = Array.isArray(entry.entry) && isReinPlugin(entry.entry[0]) ? entry.entry[1] : undefined;
      const plugin = isReinPlugin(entry.entry)
        ? entry.entry
        : Array.isArray(entry.entry)
          ? entry.entry[0]
          : undefined;
      const key = isReinPlugin(plugin) ? `plugin:${plugin.name}` : `tools:${entry.file ?? merged.length}`;
      const known = byKey.get(key);
      if (!known) {
        const first: ResolvedEntry = {
          ...entry,
          layers: [layer.name],
          places: [place],
          optionOrigins: originOf(options ?? {}, layer.name),
        };
        byKey.set(key, first);
        merged.push(first);
        continue;
      }
      known.layers?.push(layer.name);
      known.places?.push(place);
      if (!isReinPlugin(plugin)) continue;
      const [before, beforeOptions] = splitEntry(known.entry);
      // A plugin the managed layer names runs the managed layer's code: a project's own
      // module that merely takes the same name never receives the managed rules.
      const code = layer.name === "managed" ? plugin : (before as AnyReinPlugin);
      if (layer.name === "managed" && code !== before) {
        known.source = entry.source;
        if (entry.file) known.file = entry.file;
        else delete known.file;
      }
      if (options === undefined) {
        known.entry = beforeOptions === undefined ? code : [code, beforeOptions];
        continue;
      }
      const [value, origin] = mergeValues(
        beforeOptions ?? {},
        known.optionOrigins ?? {},
        options,
        originOf(options, layer.name),
      );
      known.entry = [code, value];
      known.optionOrigins = origin;
    }
  }
  const shellFromFlagsOnly = merged.find(
    (item) => item.layers?.join() === "flags" && pluginName(item.entry) === SHELL_PLUGIN,
  );
  if (shellFromFlagsOnly) {
    throw usageError(
      `--sandbox: the config loads no ${SHELL_PLUGIN}, so there is no shell to sandbox`,
      `add "${SHELL_PLUGIN}" to plugins, or leave --sandbox out`,
    );
  }
  giveGrantsFile(merged, loaded.file ? localConfigFile(loaded.dir) : undefined, layers);
  // Recording (`rein trust`, a yes at the prompt): the plugins and all they imported are now known.
  loaded.trust?.save();
  return merged;
}

function placeOf(layer: ConfigLayer, index: number, source: string): EntryPlace {
  const written = layer.config.plugins ?? [];
  const occurrence = written.slice(0, index).filter((item) => specifierOf(item) === source).length;
  return { layer: layer.name, file: layer.file, text: layer.text, index, source, occurrence };
}

const specifierOf = (entry: unknown) =>
  typeof entry === "string"
    ? entry
    : Array.isArray(entry) && typeof entry[0] === "string"
      ? entry[0]
      : "inline";

const pluginName = (entry: PluginHostEntry) => {
  const [plugin] = splitEntry(entry);
  return isReinPlugin(plugin) ? plugin.name : undefined;
};

const splitEntry = (entry: PluginHostEntry): [PluginHostEntry | AnyReinPlugin, unknown] =>
  Array.isArray(entry) && isReinPlugin(entry[0]) ? [entry[0], entry[1]] : [entry, undefined];

/**
 * A plugin declaring a `grantsFile` option writes its persistent grants to the
 * local layer of this project, and nowhere else: project grants are signed for
 * the grants file's path, so a layer that could name another file (a copied
 * `.rein/local.json` naming the original project's) would make that project's
 * grants valid here. A layer that sets it is a config error; without a project
 * config the option is removed (no "always" is offered).
 */
function giveGrantsFile(entries: ResolvedEntry[], file: string | undefined, layers: ConfigLayer[]): void {
  for (const item of entries) {
    const [plugin, options] = splitEntry(item.entry);
    if (!isReinPlugin(plugin)) continue;
    const properties = (plugin.options as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (!properties || !("grantsFile" in properties)) continue;
    if (options !== undefined && !isPlainObject(options)) continue;
    if (options?.grantsFile !== undefined) {
      const origin = (item.optionOrigins as Record<string, OriginTree> | undefined)?.grantsFile;
      const from = layers.find((layer) => layer.name === origin)?.file ?? item.places?.at(-1)?.file;
      throw pluginError(
        `${plugin.name}: "grantsFile" is set by Rein (the project's ${LOCAL_CONFIG}); a config layer cannot point project grants elsewhere`,
        {
          ...(from ? { file: from } : {}),
          hint: `remove grantsFile${typeof origin === "string" ? ` from the ${origin} layer` : ""}`,
        },
      );
    }
    if (file === undefined) continue;
    item.entry = [plugin, { ...(options ?? {}), grantsFile: file }];
    // The value is the local layer's own path.
    item.optionOrigins = { ...(item.optionOrigins as Record<string, OriginTree>), grantsFile: "local" };
  }
}

async function resolveLayer(loaded: LayerSource): Promise<ResolvedEntry[]> {
  const entries = loaded.config.plugins ?? [];
  const resolved: ResolvedEntry[] = [];
  for (const [index, entry] of entries.entries()) {
    const where = `plugins[${index}]`;
    if (typeof entry === "string") {
      const file = locate(loaded, entry, where, index);
      resolved.push({ entry: await importPlugin(loaded, entry, where, file, index), source: entry, file });
    } else if (Array.isArray(entry) && typeof entry[0] === "string") {
      const file = locate(loaded, entry[0], where, index);
      const plugin = await importPlugin(loaded, entry[0], where, file, index);
      if (!isReinPlugin(plugin)) {
        throw pluginError(
          `${where}: "${entry[0]}" is a tool pack; options can only be given to a plugin`,
          at(loaded, index),
        );
      }
      resolved.push({ entry: [plugin, entry[1]], source: entry[0], file });
    } else {
      resolved.push({ entry: entry as PluginHostEntry, source: "inline" });
    }
  }
  return resolved;
}

/** The layer's file and the line of its entry `plugins[index]`, and the index (for `CliError.index`). */
function at(loaded: LayerSource, index: number) {
  const entries = loaded.config.plugins ?? [];
  const source = specifierOf(entries[index]);
  const occurrence = entries.slice(0, index).filter((item) => specifierOf(item) === source).length;
  const line = lineOfEntry(loaded.text, source, occurrence);
  return {
    ...(loaded.file ? { file: loaded.file } : {}),
    ...(line ? { line } : {}),
    ...(loaded.layer ? { layer: loaded.layer } : {}),
    index,
  };
}

function locate(loaded: LayerSource, specifier: string, where: string, index: number): string {
  if (isPathSpecifier(specifier)) {
    const base = resolve(loaded.dir, specifier);
    const candidates = SOURCE_EXTENSIONS.map((extension) => base + extension);
    const found = candidates.find((candidate) => existsSync(candidate) && !candidate.endsWith("/"));
    if (found) return found;
    throw pluginError(`${where}: cannot find plugin "${specifier}"`, {
      ...at(loaded, index),
      hint: `looked for ${candidates.slice(0, 5).join(", ")}`,
    });
  }
  // First-party plugins (`@rein/...`) the CLI ships with are found from its own folder last.
  const fallback = specifier.startsWith("@rein/") ? [CLI_DIR] : [];
  const dirs = loaded.managed
    ? [...fallback, loaded.dir]
    : [loaded.dir, ...(loaded.fallbackDirs ?? []), ...fallback];
  const found = dirs.map((dir) => loaded.loader.resolve(specifier, dir)).find((file) => file !== undefined);
  if (found) return found;
  throw pluginError(`${where}: cannot find plugin "${specifier}"`, {
    ...at(loaded, index),
    hint: `looked for the npm package "${specifier}" in node_modules from ${join(loaded.dir, "node_modules")} upward; install it (${installHint(specifier)}) or use a "./relative/path.ts"`,
  });
}

/** How to install a missing package: Rein's own are not on the npm registry yet (their tarballs are). */
function installHint(specifier: string): string {
  if (!specifier.startsWith("@rein/")) return `npm install ${specifier}`;
  const name = specifier.split("/").slice(0, 2).join("/");
  return `not on the npm registry yet: npm install -D the ${name.slice(1).replace("/", "-")} tarball that pnpm release:pack prints in a Rein checkout`;
}

async function importPlugin(
  loaded: LayerSource,
  specifier: string,
  where: string,
  file: string,
  index: number,
): Promise<PluginHostEntry> {
  // The fault is in the plugin's file; the hint says which layer file's entry named it.
  const entry = at(loaded, index);
  const listed = {
    ...(entry.file
      ? { hint: `listed in ${entry.file}${entry.line ? `:${entry.line}` : ""} (${where})` }
      : {}),
    ...(entry.layer ? { layer: entry.layer } : {}),
    index,
  };
  let namespace: Record<string, unknown>;
  try {
    namespace = await loaded.loader.import(file);
  } catch (error) {
    // The trust gate's refusal already names the file and what to do.
    if (error instanceof CliError) throw error;
    const line = lineFromError(error, file);
    const message = (error as Error)?.message?.split("\n")[0] ?? String(error);
    throw pluginError(`${where}: cannot load plugin "${specifier}": ${message}`, {
      file,
      ...(line ? { line } : {}),
      ...listed,
      cause: error,
    });
  }
  for (const candidate of [namespace.default, namespace.plugin, namespace.tools]) {
    if (isReinPlugin(candidate)) return candidate;
    if (Array.isArray(candidate) && candidate.length > 0 && candidate.every(isAgentToolLike)) {
      return candidate as AnyAgentTool[];
    }
  }
  throw pluginError(
    `${where}: "${specifier}" does not export a plugin (export default definePlugin({...})) or a tool pack (export default [defineTool(...)])`,
    { file, ...listed },
  );
}
