/**
 * Where a merged config value was written (for errors found after the layers were
 * merged, e.g. `tools.active` naming a tool no plugin registers): the layer that set
 * it, that layer's file, and the line of its key there. Invariant: a value one layer
 * wrote is reported in that layer's file, never in the project file by default;
 * a value several layers wrote is reported where the winning (highest) layer wrote it.
 */
import type { LoadedConfig } from "./load-config.js";
import { LAYER_ORDER, type LayerName, type OriginTree } from "./merge-config.js";
import { lineOfKey } from "./validate-config.js";

export interface WrittenAt {
  layer?: LayerName;
  file?: string;
  line?: number;
}

/** The layers of an origin tree's leaves, highest precedence first. */
function layersOf(origin: OriginTree): LayerName[] {
  const found = new Set<LayerName>();
  const visit = (node: OriginTree) => {
    if (typeof node === "string") found.add(node);
    else for (const child of Array.isArray(node) ? node : Object.values(node)) visit(child);
  };
  visit(origin);
  return [...LAYER_ORDER].reverse().filter((layer) => found.has(layer));
}

/** Where the merged value at `path` (dot-joined keys: `tools.active`, `session.store`) was written. */
export function whereWritten(loaded: Pick<LoadedConfig, "origins" | "layers">, path: string): WrittenAt {
  let node: OriginTree | undefined = loaded.origins;
  for (const key of path.split(".")) {
    if (node === undefined || typeof node === "string") break;
    node = Array.isArray(node) ? node[Number(key)] : node[key];
  }
  const layer = node === undefined ? undefined : layersOf(node)[0];
  const source = layer === undefined ? undefined : loaded.layers.find((l) => l.name === layer);
  if (!source) return {};
  const line = lineOfKey(source.text, path.split(".").at(-1) as string);
  return {
    layer: source.name,
    ...(source.file ? { file: source.file } : {}),
    ...(line ? { line } : {}),
  };
}
