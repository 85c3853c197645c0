/**
 * Rein's own packages from their bundles: `scripts/bundle-packages.mjs` (run after
 * `tsc -b`) builds each publishable `@rein/*` package's exported entries (and the CLI's
 * `dist/main.js`) into a few ES modules in the package's own `dist/bundle/`; this
 * resolve hook (`module.registerHooks`) sends every import that Node resolves to one of
 * those entry files to the bundle's file instead. Rein's own modules were ~210 of the
 * ~325 a `rein run` loaded before its first model request, each a resolution, a read,
 * a compile and an instantiation.
 *
 * Invariants:
 * - Node resolves first, as always (which copy of a package, `exports`, the trust
 *   gates are unchanged); only the resulting file is swapped, for a file `<root>/dist/X`
 *   that `<root>/dist/bundle/manifest.json` lists, when `<root>/package.json` names an
 *   `@rein/` package of the manifest's name and version. The bundle sits in the same
 *   package folder, so it is exactly as much Rein's install or the project's as the
 *   file it replaces, and the module gate checks what loads, bundle files included.
 * - One copy: a package's entries are one build with shared chunks, and every bare
 *   import in it resolves through Node (and this hook) again, so the CLI's and a
 *   plugin's `import "@rein/sdk"` reach the same bundle file.
 * - The swapped-in URL is canonical: a manifest whose bundle folder or entry file is a
 *   symlink is not used.
 * - A stale bundle is never used: the manifest holds the size and mtime of the
 *   package's `dist/.tsbuildinfo` when the bundle was built; a `tsc -b` that emitted
 *   since changes them, and the package then loads from its `dist/` files. (A published
 *   package ships no `.tsbuildinfo`: its bundle and files were packed together.)
 * - A fresh reload (`rein dev`, config/native-reload.ts) keeps its meaning: a file that a
 *   reloaded module imports by path, outside any `node_modules`, is never swapped (the
 *   reload hook, which runs before this one, then gives it a fresh URL, as unbundled);
 *   nor is a URL with a query or a fragment. No bundle, an unreadable manifest or a Node
 *   without `registerHooks`: every file loads as is.
 */
import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import module from "node:module";
import { fileURLToPath } from "node:url";

export interface PackageBundleManifest {
  package: string;
  version: string;
  /** `dist/.tsbuildinfo` when the bundle was built; null when there was none. */
  stamp: { size: number; mtimeMs: number } | null;
  /** Entry file relative to the package root (`dist/index.js`) → bundle file. */
  files: Record<string, string>;
  /** Every bundled source module (relative to the root) → the bundle file holding it. */
  modules: Record<string, string>;
}

/** What a package root offers: its valid, fresh manifest, or nothing. */
export type ManifestAt = (rootUrl: string) => PackageBundleManifest | undefined;

const DIST = "/dist/";

/** The bundle's URL for one URL Node resolved, or undefined to keep Node's answer. */
export function packageBundleRedirect(url: string, manifestAt: ManifestAt): string | undefined {
  if (!url.startsWith("file:") || url.includes("?") || url.includes("#")) return undefined;
  const at = url.lastIndexOf(DIST);
  if (at < 0 || url.includes(`${DIST}bundle/`)) return undefined;
  const root = url.slice(0, at);
  const manifest = manifestAt(root);
  if (manifest === undefined) return undefined;
  const file = decodeURIComponent(url.slice(at + 1));
  const target = Object.hasOwn(manifest.files, file) ? manifest.files[file] : undefined;
  return target === undefined ? undefined : `${root}${DIST}bundle/${encodeURIComponent(target)}`;
}

/**
 * Whether a fresh reload reached `url`: imported by path from a module loaded under a
 * reload's URL (one with a query), outside any `node_modules` (native-reload.ts's rule).
 */
export function reachedByReload(specifier: string, parentURL: string | undefined, url: string): boolean {
  return (
    parentURL?.includes("?") === true &&
    /^(\.{1,2}(\/|$)|\/|file:)/.test(specifier) &&
    !url.includes("/node_modules/")
  );
}

const isManifest = (value: unknown): value is PackageBundleManifest => {
  const m = value as PackageBundleManifest;
  const isFileMap = (files: unknown) =>
    typeof files === "object" &&
    files !== null &&
    Object.values(files).every((f) => typeof f === "string" && !f.includes("/") && f.endsWith(".mjs"));
  return (
    typeof m === "object" &&
    m !== null &&
    typeof m.package === "string" &&
    typeof m.version === "string" &&
    (m.stamp === null ||
      (typeof m.stamp === "object" &&
        typeof m.stamp?.size === "number" &&
        typeof m.stamp.mtimeMs === "number")) &&
    isFileMap(m.files) &&
    isFileMap(m.modules)
  );
};

/** The manifest of the package at `rootUrl` when it is valid, Rein's, of that version and fresh. */
export function readPackageBundle(rootUrl: string): PackageBundleManifest | undefined {
  try {
    const root = fileURLToPath(rootUrl);
    const manifest: unknown = JSON.parse(readFileSync(`${root}/dist/bundle/manifest.json`, "utf8"));
    if (!isManifest(manifest) || !manifest.package.startsWith("@rein/")) return undefined;
    const pkg = JSON.parse(readFileSync(`${root}/package.json`, "utf8")) as {
      name?: unknown;
      version?: unknown;
    };
    if (pkg.name !== manifest.package || pkg.version !== manifest.version) return undefined;
    // One canonical path: the swapped-in URL is not resolved again, so neither the bundle
    // folder nor an entry file may be a symlink (the chunks they import are resolved by Node).
    if (realpathSync(`${root}/dist/bundle`) !== `${root}/dist/bundle`) return undefined;
    for (const file of Object.values(manifest.files))
      if (!lstatSync(`${root}/dist/bundle/${file}`).isFile()) return undefined;
    const built = statSync(`${root}/dist/.tsbuildinfo`, { throwIfNoEntry: false });
    if (
      built !== undefined &&
      (built.size !== manifest.stamp?.size || built.mtimeMs !== manifest.stamp.mtimeMs)
    )
      return undefined;
    return manifest;
  } catch {
    return undefined;
  }
}

/** Registers the hook (bin.ts, once); each package root's manifest is read once. */
export function usePackageBundles(manifestAt: ManifestAt = readPackageBundle): void {
  const register = (module as { registerHooks?: typeof module.registerHooks }).registerHooks;
  if (typeof register !== "function") return;
  const manifests = new Map<string, PackageBundleManifest | undefined>();
  const cached: ManifestAt = (root) => {
    if (!manifests.has(root)) manifests.set(root, manifestAt(root));
    return manifests.get(root);
  };
  register({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      if (reachedByReload(specifier, context.parentURL, resolved.url)) return resolved;
      const url = packageBundleRedirect(resolved.url, cached);
      return url ? { ...resolved, url, format: "module" } : resolved;
    },
  });
}
