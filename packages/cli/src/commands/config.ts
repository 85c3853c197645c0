/**
 * `rein config`: the merged config of every layer, each value with the layer and
 * file it came from (`--json` for scripts). Invariant: it shows what a run would
 * use - the same loading and merging as `rein run` (plugins are imported to learn
 * their names, never set up), with the same flags.
 */
import { maskConnectionStrings } from "@rein/harness";
import { isReinPlugin } from "@rein/sdk";
import { type ConfigFlags, flagsLayer } from "../config/cli-flags.js";
import { type LoadedConfig, loadConfig } from "../config/load-config.js";
import { LAYER_ORDER, type LayerName, type OriginLeaf, originLeaves } from "../config/merge-config.js";
import { type ResolvedEntry, resolvePlugins } from "../config/resolve-plugins.js";
import { CONFIG_OPTIONS } from "../config/validate-config.js";
import { ExitCode } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { terminal } from "../ui/terminal.js";

export interface ConfigOptions extends ConfigFlags {
  json?: boolean;
}

interface PluginView {
  name: string;
  source: string;
  layers: LayerName[];
  options: unknown;
  origins: OriginLeaf[];
}

const FLAG_FILE = "command line";

export async function configCommand(options: ConfigOptions, globals: GlobalOptions): Promise<number> {
  const loaded = await loadConfig({
    cwd: globals.cwd,
    configPath: globals.config,
    flags: flagsLayer(options),
  });
  const plugins = (await resolvePlugins(loaded)).map(pluginView);
  const { plugins: _all, ...rest } = loaded.config;
  // In the config table's order, whatever order the layers wrote them in.
  const rank = (leaf: OriginLeaf) => CONFIG_OPTIONS.indexOf(leaf.path.split(/[.[]/)[0] as string);
  const leaves = originLeaves(rest, loaded.origins).sort((a, b) => rank(a) - rank(b));
  const fileOf = (layer: LayerName) =>
    layer === "flags" ? FLAG_FILE : (loaded.layers.find((l) => l.name === layer)?.file ?? "");
  const layers = layerTable(loaded);
  // Connection strings are secrets: `session.url` and the like print masked.
  const term = terminal();
  const out = { write: (text: string) => term.out.write(maskConnectionStrings(text)) };
  if (options.json) {
    const where = (leaf: OriginLeaf) => ({ layer: leaf.layer, file: fileOf(leaf.layer) });
    const origins: Record<string, { layer: LayerName; file: string }> = {};
    for (const leaf of leaves) origins[leaf.path] = where(leaf);
    for (const plugin of plugins) {
      for (const leaf of plugin.origins) origins[`plugins.${plugin.name}.${leaf.path}`] = where(leaf);
    }
    const config = {
      ...rest,
      plugins: plugins.map((p) => ({ name: p.name, source: p.source, layers: p.layers, options: p.options })),
    };
    out.write(`${JSON.stringify({ layers, config, origins }, null, 2)}\n`);
    return ExitCode.ok;
  }
  const { c } = term;
  out.write("layers (lowest precedence first; managed > flags > local > project > user):\n");
  for (const layer of layers) {
    out.write(
      `  ${layer.layer.padEnd(8)} ${layer.file ?? ""}${layer.present ? "" : c.dim(" (not present)")}\n`,
    );
  }
  const from = (layer: LayerName) => c.dim(`← ${layer}${layer === "flags" ? "" : ` (${fileOf(layer)})`}`);
  out.write("\n");
  for (const leaf of leaves) out.write(`${leaf.path} = ${show(leaf.value)}  ${from(leaf.layer)}\n`);
  if (plugins.length > 0) out.write("plugins:\n");
  for (const plugin of plugins) {
    out.write(`  ${plugin.name} (${plugin.source})  ${c.dim(`← ${plugin.layers.join(", ")}`)}\n`);
    for (const leaf of plugin.origins)
      out.write(`    ${leaf.path} = ${show(leaf.value)}  ${from(leaf.layer)}\n`);
  }
  return ExitCode.ok;
}

function layerTable(loaded: LoadedConfig) {
  return LAYER_ORDER.map((name) => {
    const present = loaded.layers.some((layer) => layer.name === name);
    const file = name === "flags" ? (present ? FLAG_FILE : undefined) : loaded.files[name];
    return { layer: name, file, present };
  }).filter((row) => row.file !== undefined || row.layer === "user");
}

function pluginView(entry: ResolvedEntry): PluginView {
  const [plugin, options] = Array.isArray(entry.entry) ? entry.entry : [entry.entry, undefined];
  const name = isReinPlugin(plugin) ? plugin.name : `tool pack ${entry.source}`;
  return {
    name,
    source: entry.source,
    layers: entry.layers ?? ["project"],
    options: options ?? {},
    origins: originLeaves(options ?? {}, entry.optionOrigins ?? {}),
  };
}

/** One line of JSON, cut to keep the table readable. */
function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 160 ? `${text.slice(0, 157)}...` : text;
}
