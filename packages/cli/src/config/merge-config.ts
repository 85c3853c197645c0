/**
 * Merges config layers, remembering which layer each value came from.
 *
 * Invariants:
 * - plain objects merge per key; a scalar from a higher layer replaces a lower one;
 * - arrays are concatenated, the higher layer's items first, so rules from every
 *   layer meet in one list and strictest-wins holds across layers (a managed deny
 *   is never dropped, whatever a lower layer allows); the higher layer's items
 *   come first so its rule is the one reported among equals;
 * - a few values are whole units, replaced and never merged (`REPLACED`): the
 *   config table's `merge: "replace"` keys (the model: a script is not a list to
 *   pool) and `replaced` sub-keys (`tools.active`: pooling the lists would let a
 *   lower layer re-activate a tool a higher one left out);
 * - values that are not plain data (plugin objects, functions) are replaced whole.
 */
import { CONFIG_KEYS, CONFIG_TABLE, type ConfigKeySpec } from "@rein/sdk";

export type LayerName = "user" | "project" | "local" | "flags" | "managed";

/** Precedence, lowest first. */
export const LAYER_ORDER: readonly LayerName[] = ["user", "project", "local", "flags", "managed"];

/** Where each part of a merged value came from: a layer for a leaf, else the same shape as the value. */
export type OriginTree = LayerName | OriginTree[] | { [key: string]: OriginTree };

/** Paths (dot-joined keys) replaced whole, never merged: from the config table. */
const REPLACED = new Set(
  CONFIG_KEYS.flatMap((key) => {
    const spec: ConfigKeySpec = CONFIG_TABLE[key];
    return [
      ...(spec.merge === "replace" ? [key] : []),
      ...(spec.replaced ?? []).map((sub) => `${key}.${sub}`),
    ];
  }),
);

export const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
};

/** The origin tree of a value that came whole from one layer. */
export function originOf(value: unknown, layer: LayerName): OriginTree {
  if (Array.isArray(value)) return value.map((item) => originOf(item, layer));
  if (isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, originOf(item, layer)]));
  }
  return layer;
}

/** Merges `higher` over `lower` (see the invariants); returns the value and its origin tree. */
export function mergeValues(
  lower: unknown,
  lowerOrigin: OriginTree,
  higher: unknown,
  higherOrigin: OriginTree,
  path = "",
): [unknown, OriginTree] {
  if (higher === undefined) return [lower, lowerOrigin];
  if (lower === undefined || REPLACED.has(path)) return [higher, higherOrigin];
  if (Array.isArray(lower) && Array.isArray(higher)) {
    return [
      [...higher, ...lower],
      [...(higherOrigin as OriginTree[]), ...(lowerOrigin as OriginTree[])],
    ];
  }
  if (isPlainObject(lower) && isPlainObject(higher)) {
    const value: Record<string, unknown> = { ...lower };
    const origin: Record<string, OriginTree> = { ...(lowerOrigin as Record<string, OriginTree>) };
    for (const [key, item] of Object.entries(higher)) {
      const [merged, mergedOrigin] = mergeValues(
        lower[key],
        (lowerOrigin as Record<string, OriginTree>)[key] as OriginTree,
        item,
        (higherOrigin as Record<string, OriginTree>)[key] as OriginTree,
        path === "" ? key : `${path}.${key}`,
      );
      value[key] = merged;
      origin[key] = mergedOrigin;
    }
    return [value, origin];
  }
  return [higher, higherOrigin];
}

/** One merged value: its path (`model`, `compaction.enabled`, `rules[0]`), the value and the layer. */
export interface OriginLeaf {
  path: string;
  value: unknown;
  layer: LayerName;
}

/**
 * Flattens a merged value into leaves for display: objects by key, arrays by index;
 * an array item that came whole from one layer (a rule) is one leaf.
 */
export function originLeaves(value: unknown, origin: OriginTree, path = ""): OriginLeaf[] {
  if (typeof origin === "string") return [{ path, value, layer: origin }];
  const whole = REPLACED.has(path) ? uniformLayer(origin) : undefined;
  if (whole) return [{ path, value, layer: whole }];
  if (Array.isArray(value) && Array.isArray(origin)) {
    return value.flatMap((item, i) => {
      const itemOrigin = origin[i] ?? "project";
      const whole = uniformLayer(itemOrigin);
      return whole
        ? [{ path: `${path}[${i}]`, value: item, layer: whole }]
        : originLeaves(item, itemOrigin, `${path}[${i}]`);
    });
  }
  if (isPlainObject(value) && !Array.isArray(origin)) {
    return Object.entries(value).flatMap(([key, item]) =>
      originLeaves(
        item,
        (origin as Record<string, OriginTree>)[key] ?? "project",
        path ? `${path}.${key}` : key,
      ),
    );
  }
  return [];
}

/** Collapses an origin tree whose leaves all name one layer into that layer. */
export function uniformLayer(origin: OriginTree): LayerName | undefined {
  const layers = new Set<LayerName>();
  const visit = (node: OriginTree) => {
    if (typeof node === "string") layers.add(node);
    else for (const child of Array.isArray(node) ? node : Object.values(node)) visit(child);
  };
  visit(origin);
  return layers.size === 1 ? [...layers][0] : undefined;
}
