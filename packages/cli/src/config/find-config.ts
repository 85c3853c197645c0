/** Finds `rein.config.*` from a folder upward (the first folder that has one wins). */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { CONFIG_FILE_NAMES } from "@rein/sdk";

// One list of config names: the sandbox and the file tools protect the same ones.
export { CONFIG_FILE_NAMES };

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
