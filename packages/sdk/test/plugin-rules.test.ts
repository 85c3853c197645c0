/**
 * Declared rules (`rules` in a plugin definition): listed by the host as `by`
 * names them (`<plugin>:<rule>`), from the checked options when a function; a
 * malformed declaration is an `invalid_plugin` error naming the plugin.
 */
import { describe, expect, it } from "vitest";
import { definePlugin, loadPlugins, type Static, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const Options = Type.Object({ ids: Type.Array(Type.String(), { default: ["a"] }) });

const declaring = definePlugin({
  name: "rulebook",
  options: Options,
  rules: (options: Static<typeof Options>) => options.ids,
  setup() {},
});

describe("declared rules", () => {
  it("are listed as <plugin>:<rule>, from the options with defaults applied, duplicates once", async () => {
    const t = await createTestHarness();
    const host = await loadPlugins(t.harness, [
      [declaring, { ids: ["no-push", "reads", "no-push"] }],
      definePlugin({ name: "fixed", rules: ["budget"], setup() {} }),
      definePlugin({ name: "plain", setup() {} }),
    ]);
    expect(host.plugins.map((p) => [p.name, p.rules])).toEqual([
      ["rulebook", ["rulebook:no-push", "rulebook:reads"]],
      ["fixed", ["fixed:budget"]],
      ["plain", []],
    ]);
    await host.dispose();
    const defaults = await loadPlugins(t.harness, [declaring]);
    expect(defaults.plugins[0]?.rules).toEqual(["rulebook:a"]);
    await defaults.dispose();
    await t.dispose();
  });

  it.each([
    ["a name with a colon", ["a:b"]],
    ["a name with a space", ["a b"]],
    ["a number", [1]],
    ["not a list", "rules"],
  ])("definePlugin refuses %s", (_what, rules) => {
    expect(() => definePlugin({ name: "bad", rules: rules as never, setup() {} })).toThrow(
      expect.objectContaining({ code: "invalid_plugin", plugin: "bad" }),
    );
  });

  it.each([
    [
      "throws",
      () => {
        throw new Error("boom");
      },
    ],
    ["returns no list", () => "x"],
    ["returns a bad name", () => ["ok", "not:ok"]],
  ])(
    "loading refuses a rules function that %s, naming the plugin, and leaves the harness clean",
    async (_what, rules) => {
      const t = await createTestHarness();
      const plugin = definePlugin({
        name: "bad-rules",
        rules: rules as never,
        setup(rein) {
          rein.hooks.toolGate.tap("bad-rules", () => undefined);
        },
      });
      await expect(loadPlugins(t.harness, [plugin])).rejects.toMatchObject({
        code: "invalid_plugin",
        plugin: "bad-rules",
      });
      expect(t.harness.hooks.toolGate.taps).toEqual([]);
      await t.dispose();
    },
  );
});
