/**
 * `rein dev` reloads what changed, whatever the module format: a fresh load
 * evaluates the current bytes of native ES modules (`.mjs`, and what they import
 * relatively) as well as of TypeScript files, while a package imported from them
 * stays the one copy every load shares.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { moduleLoader } from "../src/config/module-loader.js";

let dir: string;
let previousCache: string | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-native-reload-"));
  previousCache = process.env.REIN_CACHE_DIR;
  process.env.REIN_CACHE_DIR = join(dir, ".cache");
});

afterAll(() => {
  if (previousCache === undefined) delete process.env.REIN_CACHE_DIR;
  else process.env.REIN_CACHE_DIR = previousCache;
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): string {
  const file = join(dir, name);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
  return file;
}

const fresh = (file: string) => moduleLoader({ fresh: true }).import(file);

describe("a fresh load evaluates native ES modules anew", () => {
  it("an edited .mjs plugin loads with its new bytes", async () => {
    const file = write("edited/plugin.mjs", "export const version = 1;\n");
    expect((await fresh(file)).version).toBe(1);
    write("edited/plugin.mjs", "export const version = 2;\n");
    expect((await fresh(file)).version).toBe(2);
  });

  it("a module the .mjs plugin imports relatively reloads too", async () => {
    write("nested/dep.mjs", "export const rule = 'deny';\n");
    const file = write("nested/plugin.mjs", "export { rule } from './dep.mjs';\n");
    expect((await fresh(file)).rule).toBe("deny");
    write("nested/dep.mjs", "export const rule = 'allow';\n");
    expect((await fresh(file)).rule).toBe("allow");
  });

  it("a TypeScript config that imports a .mjs plugin sees the plugin's edit", async () => {
    write("config/plugin.mjs", "export default { name: 'first' };\n");
    const config = write(
      "config/rein.config.ts",
      "import plugin from './plugin.mjs';\nexport const name: string = plugin.name;\n",
    );
    expect((await fresh(config)).name).toBe("first");
    write("config/plugin.mjs", "export default { name: 'second' };\n");
    expect((await fresh(config)).name).toBe("second");
  });

  it("a package the plugin imports is one copy across fresh loads", async () => {
    write(
      "shared/node_modules/token-pkg/package.json",
      '{ "name": "token-pkg", "type": "module", "exports": "./index.js" }\n',
    );
    write("shared/node_modules/token-pkg/index.js", "export const token = { made: Math.random() };\n");
    const file = write("shared/plugin.mjs", "export { token } from 'token-pkg';\nexport const round = 1;\n");
    const first = await fresh(file);
    write("shared/plugin.mjs", "export { token } from 'token-pkg';\nexport const round = 2;\n");
    const second = await fresh(file);
    expect(second.round).toBe(2);
    expect(second.token).toBe(first.token);
  });

  it("the ordinary loader keeps the module it evaluated once", async () => {
    const file = write("cached/plugin.mjs", "export const version = 1;\n");
    const loader = moduleLoader();
    expect((await loader.import(file)).version).toBe(1);
    write("cached/plugin.mjs", "export const version = 2;\n");
    expect((await loader.import(file)).version).toBe(1);
  });
});
