/**
 * Finds, loads and merges the config layers (layers.ts): TypeScript and
 * JavaScript through the module loader, JSON directly. Invariant: every layer is
 * validated on its own, and every failure is a `config` CliError naming that
 * layer's file (and the line when it can be known); the merged config remembers
 * which layer each value came from.
 */
import { existsSync, lstatSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { ReinConfig } from "@rein/sdk";
import { CliError, configError } from "../errors.js";
import { type ProjectTrust, startTrust } from "../trust/project-trust.js";
import { askOnTerminal, askToTrust } from "../trust/trust-prompt.js";
import { findConfig } from "./find-config.js";
import { parseJsonConfig } from "./json-config.js";
import { localConfigFile, managedConfigFile, userConfigFile } from "./layers.js";
import { type LayerName, mergeValues, type OriginTree, originOf } from "./merge-config.js";
import { lineFromError, type ModuleLoader, moduleLoader } from "./module-loader.js";
import { CONFIG_OPTIONS, validateConfig } from "./validate-config.js";

/** One layer as read: its file (none for the flags), the folder its relative paths resolve from, its config. */
export interface ConfigLayer {
  name: LayerName;
  file: string | undefined;
  dir: string;
  config: ReinConfig;
  text: string | undefined;
}

export interface LoadedConfig {
  /** The project config file, or undefined when none was found (defaults apply). */
  file: string | undefined;
  /** The project folder: relative paths of the project config (and the session dir) resolve from it. */
  dir: string;
  /** The merged config of every layer (its `plugins`: every layer's entries; resolvePlugins merges them). */
  config: ReinConfig;
  /** The project file's text, for locating options in error messages. */
  text: string | undefined;
  loader: ModuleLoader;
  /** The layers present, lowest precedence first (user, project, local, flags, managed). */
  layers: ConfigLayer[];
  /** Which layer each merged value (but `plugins`) came from. */
  origins: OriginTree;
  /** Every layer's file, present or not, for `rein config`. */
  files: Record<Exclude<LayerName, "flags">, string | undefined>;
  /** The trust check this load ran under (trust/project-trust.ts). */
  trust: ProjectTrust;
}

export async function loadConfig(options: {
  cwd: string;
  configPath?: string | undefined;
  /** Re-evaluate the config and the plugins it loads (reload after an edit). */
  fresh?: boolean;
  /** The command-line layer (`--model`, `--allow`, ...). */
  flags?: ReinConfig | undefined;
  env?: NodeJS.ProcessEnv;
  /** Record the project's code as trusted (`rein trust`, `rein init`) instead of checking it. */
  recordTrust?: boolean;
  /** Whether a terminal question may ask to trust changed code (not while a chat owns stdin). */
  askTrust?: boolean;
}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const loader = moduleLoader({ fresh: options.fresh === true });
  let file: string | undefined;
  if (options.configPath) {
    file = resolve(options.cwd, options.configPath);
    if (!existsSync(file)) throw configError(`config file not found: ${file}`, { hint: "check --config" });
  } else {
    file = findConfig(options.cwd);
  }
  const dir = file ? dirname(file) : options.cwd;
  const files = {
    user: userConfigFile(env),
    project: file,
    local: localConfigFile(dir),
    managed: managedConfigFile(env),
  };
  // Before any layer below managed is read: nothing of the project runs untrusted.
  const trust = await startTrust({
    project: dir,
    localFile: files.local,
    managedFile: files.managed,
    env,
    ...(options.recordTrust ? { record: true } : {}),
    ...(options.askTrust !== false && askOnTerminal() ? { ask: askToTrust } : {}),
  });
  const layers: ConfigLayer[] = [];
  const read = async (name: ConfigLayer["name"], layerFile: string | undefined, jsonOnly = false) => {
    if (!layerFile) return;
    // The managed layer is absent only when nothing is there: a dangling link or a
    // file that cannot be looked at is an error, never "no administrator rules".
    if (name === "managed" ? !managedPresent(layerFile) : !existsSync(layerFile)) return;
    if (jsonOnly && !layerFile.endsWith(".json"))
      throw configError(`the ${name} config must be a .json file`, { file: layerFile });
    layers.push({
      name,
      file: layerFile,
      dir: dirname(layerFile),
      ...(await readConfigFile(layerFile, loader, name)),
    });
  };
  await read("user", files.user);
  await read("project", file);
  // The local layer sits beside the project config; without one there is no project to keep it for.
  await read("local", file ? files.local : undefined, true);
  if (options.flags && Object.keys(options.flags).length > 0) {
    layers.push({ name: "flags", file: undefined, dir: options.cwd, config: options.flags, text: undefined });
  }
  await read("managed", files.managed, true);

  let merged: unknown = {};
  let origins: OriginTree = {};
  const plugins: NonNullable<ReinConfig["plugins"]> = [];
  for (const layer of layers) {
    const { plugins: own, ...rest } = layer.config;
    [merged, origins] = mergeValues(merged, origins, rest, originOf(rest, layer.name));
    plugins.push(...(own ?? []));
  }
  const config = { ...(merged as ReinConfig), ...(plugins.length > 0 ? { plugins } : {}) };
  const project = layers.find((layer) => layer.name === "project");
  trust.save();
  return { file, dir, config, text: project?.text, loader, layers, origins, files, trust };
}

/** Whether the managed file is there; throws when that cannot be told or it is a dangling link. */
function managedPresent(file: string): boolean {
  try {
    lstatSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return false;
    throw configError(`cannot read the managed config: ${(error as Error).message}`, { file, cause: error });
  }
  try {
    statSync(file);
  } catch (error) {
    throw configError(
      `cannot read the managed config: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "it is a symbolic link to nothing" : (error as Error).message}`,
      { file, cause: error, hint: "fix or remove the link; the administrator's rules are not skipped" },
    );
  }
  return true;
}

/** Reads and validates one config file. */
async function readConfigFile(
  file: string,
  loader: ModuleLoader,
  layer: LayerName,
): Promise<{ config: ReinConfig; text: string }> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw configError(`cannot read the config: ${(error as Error).message}`, { file, cause: error });
  }
  let raw: unknown;
  if (file.endsWith(".json")) {
    raw = parseJsonConfig(text, file);
  } else {
    let namespace: Record<string, unknown>;
    try {
      namespace = await loader.import(file);
    } catch (error) {
      // The trust gate's refusal already names the file and what to do.
      if (error instanceof CliError) throw error;
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
    const commonJsConfig = named.every((key) => CONFIG_OPTIONS.includes(key));
    if (!("default" in namespace) && !commonJsConfig) {
      throw configError(
        `no default export${named.length > 0 ? ` (found ${named.map((n) => `"${n}"`).join(", ")})` : ""}`,
        { file, hint: "export the config as the default: export default defineConfig({ ... })" },
      );
    }
    raw = "default" in namespace ? namespace.default : namespace;
  }
  return { config: validateConfig(raw, { file, text, layer }), text };
}
