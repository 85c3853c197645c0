/**
 * Finds and loads `rein.config.*`: TypeScript and JavaScript through the module
 * loader, JSON directly. Invariant: the result is validated, and every failure is
 * a `config` CliError naming the file (and the line when it can be known).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ReinConfig } from "@rein/sdk";
import { configError } from "../errors.js";
import { findConfig } from "./find-config.js";
import { parseJsonConfig } from "./json-config.js";
import { lineFromError, type ModuleLoader, moduleLoader } from "./module-loader.js";
import { CONFIG_OPTIONS, validateConfig } from "./validate-config.js";

export interface LoadedConfig {
  /** The config file, or undefined when none was found (defaults apply). */
  file: string | undefined;
  /** Folder that relative paths in the config resolve from. */
  dir: string;
  config: ReinConfig;
  /** The file's text, for locating options in error messages. */
  text: string | undefined;
  loader: ModuleLoader;
}

export async function loadConfig(options: {
  cwd: string;
  configPath?: string | undefined;
  /** Re-evaluate the config and the plugins it loads (reload after an edit). */
  fresh?: boolean;
}): Promise<LoadedConfig> {
  const loader = moduleLoader({ fresh: options.fresh === true });
  let file: string | undefined;
  if (options.configPath) {
    file = resolve(options.cwd, options.configPath);
    if (!existsSync(file)) throw configError(`config file not found: ${file}`, { hint: "check --config" });
  } else {
    file = findConfig(options.cwd);
  }
  if (!file) return { file: undefined, dir: options.cwd, config: {}, text: undefined, loader };

  const text = readFileSync(file, "utf8");
  let raw: unknown;
  if (file.endsWith(".json")) {
    raw = parseJsonConfig(text, file);
  } else {
    let namespace: Record<string, unknown>;
    try {
      namespace = await loader.import(file);
    } catch (error) {
      const line = lineFromError(error, file);
      const message = (error as Error)?.message?.split("\n")[0] ?? String(error);
      throw configError(`cannot load the config: ${message}`, {
        file,
        ...(line ? { line } : {}),
        cause: error,
      });
    }
    const named = Object.keys(namespace).filter((key) => key !== "__esModule");
    // `module.exports = { model, ... }` arrives as the namespace itself; anything else needs a default export.
    const commonJsConfig = named.every((key) => (CONFIG_OPTIONS as readonly string[]).includes(key));
    if (!("default" in namespace) && !commonJsConfig) {
      throw configError(
        `no default export${named.length > 0 ? ` (found ${named.map((n) => `"${n}"`).join(", ")})` : ""}`,
        { file, hint: "export the config as the default: export default defineConfig({ ... })" },
      );
    }
    raw = "default" in namespace ? namespace.default : namespace;
  }
  const config = validateConfig(raw, { file, text });
  return { file, dir: dirname(file), config, text, loader };
}
