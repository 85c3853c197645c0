/**
 * Rein's own installation: the code the trust record never needs to hold, because
 * it is Rein itself (the CLI, its first-party plugins and their dependencies), not
 * the project's.
 *
 * - `installRoot()`: the `node_modules` folder Rein was installed into, or, for a
 *   workspace checkout, the workspace. Everything below it that is outside the
 *   project is Rein's.
 * - `reinPackages()`: when Rein is installed inside the project (a dev dependency),
 *   only the package folders of the CLI's own runtime dependency closure are Rein's:
 *   any other package in the project's `node_modules` is the project's, and checked.
 *   Computed once, when first needed.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

let cliRoot: string | undefined;
let root: string | undefined;
let packages: string[] | undefined;

const cli = () => {
  cliRoot ??= realpathSync.native(join(dirname(fileURLToPath(import.meta.url)), "..", ".."));
  return cliRoot;
};

export function installRoot(): string {
  root ??= find(cli());
  return root;
}

function find(from: string): string {
  const segments = from.split(sep);
  const at = segments.indexOf("node_modules");
  if (at > 0) return segments.slice(0, at + 1).join(sep);
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, "pnpm-workspace.yaml"))) return dir;
    if (dirname(dir) === dir) return from;
  }
}

/** The real package folders of the CLI and everything it depends on at run time. */
export function reinPackages(): string[] {
  if (packages !== undefined) return packages;
  const seen = new Set<string>();
  const queue = [cli()];
  while (queue.length > 0) {
    const dir = queue.pop() as string;
    if (seen.has(dir)) continue;
    seen.add(dir);
    let manifest: { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    try {
      manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    } catch {
      continue;
    }
    for (const name of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      const found = packageDir(name, dir);
      if (found !== undefined && !seen.has(found)) queue.push(found);
    }
  }
  packages = [...seen];
  return packages;
}

/** Where Node would find package `name` from the package folder `from` (node_modules upward). */
function packageDir(name: string, from: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync.native(candidate);
    if (dirname(dir) === dir) return undefined;
  }
}
