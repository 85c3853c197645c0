/**
 * Rein's own installation: the code the trust record never needs to hold, because
 * it is Rein itself (the CLI, its first-party plugins and their dependencies), not
 * the project's. It is the `node_modules` folder Rein was installed into, or, for a
 * workspace checkout, the workspace. Files of the project are never exempt, even
 * when Rein is installed inside it (project-trust.ts checks the project first).
 */
import { existsSync, realpathSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

let root: string | undefined;

export function installRoot(): string {
  root ??= find(realpathSync.native(join(dirname(fileURLToPath(import.meta.url)), "..", "..")));
  return root;
}

function find(cliRoot: string): string {
  const segments = cliRoot.split(sep);
  const at = segments.indexOf("node_modules");
  if (at > 0) return segments.slice(0, at + 1).join(sep);
  for (let dir = cliRoot; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) return dir;
    if (dirname(dir) === dir) return cliRoot;
  }
}
