/**
 * A plugin entry at fault is named by config line and `plugins[i]`: a misspelt
 * option (with "did you mean"), a wrong type, and a misspelt hook name (with the
 * plugin file's line). Run through the built binary, exit code 2, no stack trace.
 */
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig } from "./support/rein-process.js";

afterAll(cleanup);

const FS_PLUGIN = `import { definePlugin, Type } from "@rein/sdk";
export default definePlugin({
  name: "fs-rules",
  options: Type.Object({
    writable: Type.Array(Type.String(), { default: [] }),
    limits: Type.Object({ maxBytes: Type.Number({ default: 10 }) }, { default: {} }),
  }),
  setup() {},
});
`;

const TYPO_PLUGIN = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "typo",
  setup(rein) {
    // @ts-expect-error misspelt on purpose
    rein.hooks.toolgate.tap("typo", () => undefined);
  },
});
`;

const config = (entry: string) =>
  scriptedConfig(
    ["ok"],
    `plugins: [
    "./typo-free.ts",
    ${entry},
  ],`,
  );

const OK_PLUGIN = `import { definePlugin } from "@rein/sdk";
export default definePlugin({ name: "typo-free", setup() {} });
`;

describe("plugin entries at fault", { timeout: 60_000 }, () => {
  it("a misspelt option names the config line of the key, plugins[i] and the closest option", async () => {
    const dir = project({
      "rein.config.ts": config(`["./fs.ts", {
      writabel: ["src"],
    }]`),
      "typo-free.ts": OK_PLUGIN,
      "fs.ts": FS_PLUGIN,
    });
    const result = await rein(["plugins"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /rein\.config\.ts:7: plugins\[1\]: plugin "fs-rules": option \/writabel is not a known option; did you mean "writable"\?/,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it("a wrong type names the line of the nested key and plugins[i]", async () => {
    const dir = project({
      "rein.config.ts": config(`["./fs.ts", {
      limits: {
        maxBytes: "lots" } }]`),
      "typo-free.ts": OK_PLUGIN,
      "fs.ts": FS_PLUGIN,
    });
    const result = await rein(["run", "hi"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'rein.config.ts:8: plugins[1]: plugin "fs-rules": option /limits/maxBytes expected number, got string',
    );
  });

  it("a misspelt hook fails at setup naming the plugin, its file and line, and the closest hook", async () => {
    const dir = project({
      "rein.config.ts": config(`"./typo.ts"`),
      "typo-free.ts": OK_PLUGIN,
      "typo.ts": TYPO_PLUGIN,
    });
    const result = await rein(["plugins"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'rein.config.ts:6: plugins[1]: plugin "typo" uses rein.hooks.toolgate, which does not exist; did you mean "toolGate"?',
    );
    expect(result.stderr).toMatch(/typo\.ts:6/);
    expect(result.stderr).not.toContain("Cannot read properties");
  });

  it("a plugin whose setup throws is named with plugins[i] and the line in its own file", async () => {
    const dir = project({
      "rein.config.ts": config(`"./broken.ts"`),
      "typo-free.ts": OK_PLUGIN,
      "broken.ts": `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "broken",
  setup() {
    const settings = JSON.parse("null");
    settings.level.push(1);
  },
});
`,
    });
    const result = await rein(["plugins"], dir);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('rein.config.ts:6: plugins[1]: plugin "broken" failed in setup');
    expect(result.stderr).toMatch(/in \/.*broken\.ts:6/);
  });
});
