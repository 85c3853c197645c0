/** Finds `rein.config.*` from a folder upward (the first folder that has one wins). */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";

export const CONFIG_FILE_NAMES = [
  "rein.config.ts",
  "rein.config.mts",
  "rein.config.js",
  "rein.config.mjs",
  "rein.config.json",
] as const;

export function findConfig(startDir: string): string | undefined {
  let dir = startDir;
  while (true) {
    for (const name of CONFIG_FILE_NAMES) {
      const candidate = join(dir, name);
      if (existsSync(candidate)) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
