/**
 * Turns the config's `plugins` entries into loaded plugins and tool packs, in
 * order. A string is a relative path (from the config's folder) or an npm package
 * name; `[specifier, options]` adds options. Invariant: a failure names the entry
 * (`plugins[2]`), the specifier, the config file and line, and where it was looked for.
 */
import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { type AnyAgentTool, isAgentToolLike, isReinPlugin, type PluginHostEntry } from "@rein/sdk";
import { pluginError } from "../errors.js";
import type { LoadedConfig } from "./load-config.js";
import { lineFromError } from "./module-loader.js";
import { lineOfKey } from "./validate-config.js";

const SOURCE_EXTENSIONS = ["", ".ts", ".mts", ".js", ".mjs", "/index.ts", "/index.js"];

const isPathSpecifier = (specifier: string) =>
  specifier.startsWith("./") || specifier.startsWith("../") || isAbsolute(specifier);

export interface ResolvedEntry {
  entry: PluginHostEntry;
  /** Where it came from, for `rein plugins`. */
  source: string;
  /** The module file it was loaded from (for locating failures in the plugin's code). */
  file?: string;
}

export async function resolvePlugins(loaded: LoadedConfig): Promise<ResolvedEntry[]> {
  const entries = loaded.config.plugins ?? [];
  const resolved: ResolvedEntry[] = [];
  for (const [index, entry] of entries.entries()) {
    const where = `plugins[${index}]`;
    if (typeof entry === "string") {
      const file = locate(loaded, entry, where);
      resolved.push({ entry: await importPlugin(loaded, entry, where, file), source: entry, file });
    } else if (Array.isArray(entry) && typeof entry[0] === "string") {
      const file = locate(loaded, entry[0], where);
      const plugin = await importPlugin(loaded, entry[0], where, file);
      if (!isReinPlugin(plugin)) {
        throw pluginError(
          `${where}: "${entry[0]}" is a tool pack; options can only be given to a plugin`,
          at(loaded),
        );
      }
      resolved.push({ entry: [plugin, entry[1]], source: entry[0], file });
    } else {
      resolved.push({ entry: entry as PluginHostEntry, source: "inline" });
    }
  }
  return resolved;
}

function at(loaded: LoadedConfig) {
  const line = lineOfKey(loaded.text, "plugins");
  return { ...(loaded.file ? { file: loaded.file } : {}), ...(line ? { line } : {}) };
}

function locate(loaded: LoadedConfig, specifier: string, where: string): string {
  if (isPathSpecifier(specifier)) {
    const base = resolve(loaded.dir, specifier);
    const candidates = SOURCE_EXTENSIONS.map((extension) => base + extension);
    const found = candidates.find((candidate) => existsSync(candidate) && !candidate.endsWith("/"));
    if (found) return found;
    throw pluginError(`${where}: cannot find plugin "${specifier}"`, {
      ...at(loaded),
      hint: `looked for ${candidates.slice(0, 5).join(", ")}`,
    });
  }
  const found = loaded.loader.resolve(specifier, loaded.dir);
  if (found) return found;
  throw pluginError(`${where}: cannot find plugin "${specifier}"`, {
    ...at(loaded),
    hint: `looked for the npm package "${specifier}" in node_modules from ${join(loaded.dir, "node_modules")} upward; install it (npm install ${specifier}) or use a "./relative/path.ts"`,
  });
}

async function importPlugin(
  loaded: LoadedConfig,
  specifier: string,
  where: string,
  file: string,
): Promise<PluginHostEntry> {
  let namespace: Record<string, unknown>;
  try {
    namespace = await loaded.loader.import(file);
  } catch (error) {
    const line = lineFromError(error, file);
    const message = (error as Error)?.message?.split("\n")[0] ?? String(error);
    throw pluginError(`${where}: cannot load plugin "${specifier}": ${message}`, {
      file,
      ...(line ? { line } : {}),
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
    { file },
  );
}
