/**
 * Where the `@rein/*` packages a scaffold depends on come from. Nothing under
 * `@rein/*` is on the npm registry yet, so a `^0.1.0` range would 404: when this
 * CLI was itself installed from the tarballs `pnpm release:pack` makes (the
 * project that holds it lists `@rein/cli` as `file:…/rein-cli-<v>.tgz`), the
 * scaffold points at the sibling tarballs in that folder, and `npm install` works
 * as printed. Otherwise (a workspace checkout, a link) the range stays, and the
 * `next:` line says how to get the tarballs.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { installRoot } from "../trust/install-root.js";

export interface ReinSource {
  /** The folder of packed tarballs this CLI came from, if it came from one. */
  tarballs?: string;
  /** The dependency spec for `@rein/<name>`: `file:<tarball>` from that folder, else `^version`. */
  specOf(name: string): string;
}

/** The tarball `pnpm pack` names for package `name` at `version`: `@rein/cli` → `rein-cli-0.1.0.tgz`. */
export const tarballName = (name: string, version: string) =>
  `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`;

export function reinSource(version: string): ReinSource {
  const tarballs = tarballFolder();
  return {
    tarballs,
    specOf(name) {
      const file = tarballs === undefined ? undefined : join(tarballs, tarballName(name, version));
      return file !== undefined && existsSync(file) ? `file:${file}` : `^${version}`;
    },
  };
}

/** The folder of the `file:` tarball the enclosing project installed `@rein/cli` from, if any. */
function tarballFolder(): string | undefined {
  const modules = installRoot();
  if (basename(modules) !== "node_modules") return undefined;
  const projectDir = dirname(modules);
  let manifest: Record<string, Record<string, string> | undefined>;
  try {
    manifest = JSON.parse(readFileSync(join(projectDir, "package.json"), "utf8"));
  } catch {
    return undefined;
  }
  const spec = manifest.dependencies?.["@rein/cli"] ?? manifest.devDependencies?.["@rein/cli"];
  const file = spec?.match(/^file:(.+\.tgz)$/)?.[1];
  if (file === undefined) return undefined;
  return dirname(isAbsolute(file) ? file : resolve(projectDir, file));
}

/** What a `next:` line says when the packages have no tarball to point at. */
export const NOT_PUBLISHED =
  "the @rein packages are not on the npm registry yet: in a Rein checkout run pnpm release:pack and, here, the npm install line it prints";
