/**
 * Red-team table for Rein's transpile cache (config/transpile-cache.ts): the cache
 * folder is the user's, so a model with an unsandboxed shell can write into it. An
 * entry Rein did not write (a forged one, one with another entry's MAC, one edited
 * after Rein wrote it, one without a MAC from before this version) must never run:
 * the file is transpiled again from the bytes the trust gate admitted, and the entry
 * rewritten. A genuine entry is used.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cacheDir, moduleLoader } from "../../src/config/module-loader.js";
import { TRANSPILER_ID } from "../../src/config/transpile.js";
import { cacheKeyFile, forgetCacheKey } from "../../src/config/transpile-cache.js";

const saved = { cache: process.env.REIN_CACHE_DIR, config: process.env.REIN_CONFIG_DIR };
let dir = "";
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-transpile-cache-"));
  process.env.REIN_CACHE_DIR = join(dir, "cache");
  process.env.REIN_CONFIG_DIR = join(dir, "config");
  forgetCacheKey();
});
afterAll(() => {
  for (const [name, value] of [
    ["REIN_CACHE_DIR", saved.cache],
    ["REIN_CONFIG_DIR", saved.config],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  forgetCacheKey();
});

let count = 0;
/** A plugin-like module; returns its file and the one cache entry its first load wrote. */
async function cachedModule(): Promise<{ file: string; entry: string; value: unknown }> {
  count++;
  const file = join(dir, `plugin${count}.ts`);
  writeFileSync(file, `const n: number = ${count};\nexport const value = "genuine-" + n;\n`);
  const loaded = await moduleLoader({ fresh: true }).import(file);
  const folder = join(cacheDir(), TRANSPILER_ID);
  const entry = readdirSync(folder).find((name) => name.startsWith(`plugin${count}.ts-`));
  expect(entry, "the first load writes a cache entry").toBeDefined();
  return { file, entry: join(folder, entry as string), value: loaded.value };
}

const EVIL = 'exports.value = "forged";\n';

const ATTACKS: [string, (entry: string, other: string) => string][] = [
  ["a forged entry (plain code under the right name)", () => EVIL],
  ["a forged entry with a made-up MAC header", () => `//rein-mac:${"0".repeat(64)}\n${EVIL}`],
  [
    "another genuine entry's MAC and code moved under this name",
    (_entry, other) => readFileSync(other, "utf8").replace(/genuine-/g, "genuine-"),
  ],
  [
    "the genuine entry's MAC over edited code",
    (entry) => readFileSync(entry, "utf8").replace("genuine-", "forged-"),
  ],
  [
    "the genuine entry's MAC, code appended after it",
    (entry) => `${readFileSync(entry, "utf8")}\nexports.value = "forged";\n`,
  ],
  ["a MAC header without the newline", (entry) => readFileSync(entry, "utf8").replace("\n", "")],
  ["an empty entry", () => ""],
];

describe("a transpile cache entry Rein did not write never runs", () => {
  for (const [name, forge] of ATTACKS) {
    it(`${name}: transpiled again from the admitted source, and rewritten`, async () => {
      const other = await cachedModule();
      const target = await cachedModule();
      expect(target.value).toBe(`genuine-${count}`);
      writeFileSync(target.entry, forge(target.entry, other.entry));
      const again = await moduleLoader({ fresh: true }).import(target.file);
      expect(again.value).toBe(`genuine-${count}`);
      // Rewritten by Rein: the next load is a genuine hit.
      expect(readFileSync(target.entry, "utf8")).toMatch(/^\/\/rein-mac:[0-9a-f]{64}\n/);
      expect(readFileSync(target.entry, "utf8")).not.toContain("forged");
    });
  }

  it("a genuine entry is used (a hit runs the cached code, not a new transform)", async () => {
    const target = await cachedModule();
    const before = statSync(target.entry).mtimeMs;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const again = await moduleLoader({ fresh: true }).import(target.file);
    expect(again.value).toBe(`genuine-${count}`);
    expect(statSync(target.entry).mtimeMs).toBe(before);
  });

  it("keeps the key in the user's Rein config dir, readable by the user alone", () => {
    const key = cacheKeyFile();
    expect(key.startsWith(join(dir, "config"))).toBe(true);
    expect(existsSync(key)).toBe(true);
    expect(statSync(key).mode & 0o077).toBe(0);
    expect(readFileSync(key, "utf8").trim()).toMatch(/^[0-9a-f]{64}$/);
  });
});
