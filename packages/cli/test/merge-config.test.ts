/**
 * How layers merge (config/merge-config.ts): per key, scalars from the higher
 * layer, arrays concatenated with the higher layer's items first, a few values
 * replaced whole, and every leaf's layer remembered.
 */
import { describe, expect, it } from "vitest";
import {
  type LayerName,
  mergeValues,
  type OriginTree,
  originLeaves,
  originOf,
  uniformLayer,
} from "../src/config/merge-config.js";

function mergeAll(...layers: [LayerName, Record<string, unknown>][]) {
  let value: unknown = {};
  let origin: OriginTree = {};
  for (const [name, config] of layers)
    [value, origin] = mergeValues(value, origin, config, originOf(config, name));
  return { value, origin };
}

describe("merging config layers", () => {
  it("merges objects per key; a higher layer's scalar wins", () => {
    const { value, origin } = mergeAll(
      ["user", { compaction: { enabled: true, reserveTokens: 1 }, thinkingLevel: "low" }],
      ["project", { compaction: { reserveTokens: 2 } }],
      ["managed", { thinkingLevel: "off" }],
    );
    expect(value).toEqual({ compaction: { enabled: true, reserveTokens: 2 }, thinkingLevel: "off" });
    expect(originLeaves(value, origin)).toEqual([
      { path: "compaction.enabled", value: true, layer: "user" },
      { path: "compaction.reserveTokens", value: 2, layer: "project" },
      { path: "thinkingLevel", value: "off", layer: "managed" },
    ]);
  });

  it("concatenates arrays, the higher layer's items first, each item keeping its layer", () => {
    const deny = { rule: "bash(rm *)", decision: "deny" };
    const allow = { rule: "bash(rm *)", decision: "allow" };
    const { value, origin } = mergeAll(["project", { rules: [allow] }], ["managed", { rules: [deny] }]);
    expect(value).toEqual({ rules: [deny, allow] });
    expect(originLeaves(value, origin)).toEqual([
      { path: "rules[0]", value: deny, layer: "managed" },
      { path: "rules[1]", value: allow, layer: "project" },
    ]);
  });

  it("replaces the model, the system prompt and tools.active whole", () => {
    const { value, origin } = mergeAll(
      ["project", { model: { script: ["a", "b"] }, tools: { active: ["read", "bash"] } }],
      ["managed", { model: { script: ["c"] }, tools: { active: ["read"] } }],
    );
    expect(value).toEqual({ model: { script: ["c"] }, tools: { active: ["read"] } });
    expect(originLeaves(value, origin).map((leaf) => [leaf.path, leaf.layer])).toEqual([
      ["model", "managed"],
      ["tools.active", "managed"],
    ]);
  });

  it("replaces values that are not plain data (a plugin object, a function)", () => {
    const lower = { f: () => 1 };
    const higher = Object.create({ inherited: true }) as Record<string, unknown>;
    const { value } = mergeAll(["project", { x: lower }], ["local", { x: higher }]);
    expect((value as { x: unknown }).x).toBe(higher);
  });

  it("a tree is one layer only when every leaf is (empty parts do not count)", () => {
    expect(uniformLayer({ a: "local", b: ["local"], c: [] })).toBe("local");
    expect(uniformLayer({ a: "local", b: ["project"] })).toBeUndefined();
    expect(uniformLayer({})).toBeUndefined();
  });
});
