/**
 * Third-party packages from their bundles: `scripts/bundle-vendor.mjs` (run after
 * `tsc -b`) builds typebox's entries, @anthropic-ai/sdk's root entry, pi-ai's two
 * dependencies pi-schema and pi-telemetry (every entry of each) and commander's root
 * entry into a few ES modules each under `dist/vendor/<package>/`; this resolve hook
 * (`module.registerHooks`, Node 22.15+) sends every import or require that Node
 * resolves to one of those entry files, of the bundled version, to the bundle's file
 * instead. Together they were ~850 of the ~1,240 modules a `rein run` loaded before
 * its first model request (typebox and the SDK ~800, the other three 52), and each module costs a resolution, a read, a
 * compile and an instantiation.
 *
 * Invariants:
 * - Node resolves first, as always (the project's node_modules, `exports`, the trust
 *   gates are unchanged); only the resulting file is swapped, and only for a package
 *   of the bundled name and version, for a file that is one of its bundled entries.
 *   Another version, or any other file, loads as is.
 * - One copy: a package's entries come from one build with shared chunks, and all of
 *   typebox's, pi-schema's and pi-telemetry's exported entries are bundled, so their own
 *   files never load beside the bundle (typebox's format and settings registries, and
 *   pi-schema's formats, stay single). @anthropic-ai/sdk is
 *   bundled at its root entry, the only one anything here imports (pi-ai's Anthropic
 *   provider), commander at its root entry (only the CLI imports it; its package has no
 *   other entry). @rein/sdk, @rein/harness, tapable and pi-ai are never bundled: plugins
 *   share the CLI's copies of them (config/module-loader.ts).
 * - Registered in bin.ts before any module that imports them; it applies to the
 *   modules jiti imports natively (plugins under node_modules) as to the CLI's own.
 * - No bundle (a plain `tsc -b` build), an unreadable manifest, or a Node without
 *   `registerHooks`: nothing is registered and every package loads from node_modules.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import module from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface BundleManifest {
  package: string;
  version: string;
  /** Entry file relative to the package root (`build/value/index.mjs`) → bundle file. */
  files: Record<string, string>;
}

export interface VendorBundle {
  manifest: BundleManifest;
  /** The folder of the bundle's files. */
  dir: string;
}

/** Where a resolved file sits in a package named `name`: its root folder and its path inside. */
export function packageFileOf(url: string, name: string): { root: string; file: string } | undefined {
  if (!url.startsWith("file:")) return undefined;
  return packageFileAt(fileURLToPath(url), name);
}

function packageFileAt(path: string, name: string): { root: string; file: string } | undefined {
  const marker = `${sep}node_modules${sep}${name.split("/").join(sep)}${sep}`;
  const at = path.lastIndexOf(marker);
  if (at < 0) return undefined;
  return {
    root: path.slice(0, at + marker.length - 1),
    file: path
      .slice(at + marker.length)
      .split(sep)
      .join("/"),
  };
}

/** The bundle's URL for one URL Node resolved, or undefined to keep Node's answer. */
export function bundleRedirect(
  bundles: readonly VendorBundle[],
  url: string,
  versionOf: (root: string, name: string) => string | undefined,
): string | undefined {
  // Every resolution passes here (in an npm install, every file of Rein's own is under
  // node_modules too): a URL that does not even name a bundled package's folder is
  // answered by a string search, and the path of one that does is worked out once, not
  // once per bundle. (Package names need no escaping in a file URL; were one escaped,
  // the file would merely load from node_modules.)
  if (!url.startsWith("file:") || !bundles.some((b) => url.includes(`/node_modules/${b.manifest.package}/`)))
    return undefined;
  const path = fileURLToPath(url);
  for (const { manifest, dir } of bundles) {
    const found = packageFileAt(path, manifest.package);
    if (!found) continue;
    const target = Object.hasOwn(manifest.files, found.file) ? manifest.files[found.file] : undefined;
    if (target === undefined || versionOf(found.root, manifest.package) !== manifest.version)
      return undefined;
    return pathToFileURL(join(dir, target)).href;
  }
  return undefined;
}

const isManifest = (value: unknown): value is BundleManifest => {
  const m = value as BundleManifest;
  return (
    typeof m === "object" &&
    m !== null &&
    typeof m.package === "string" &&
    typeof m.version === "string" &&
    typeof m.files === "object" &&
    m.files !== null &&
    Object.values(m.files).every((f) => typeof f === "string" && !f.includes("/") && f.endsWith(".mjs"))
  );
};

/** The bundles under `vendorDir` (`typebox/`, `@scope/name/`), each with a valid manifest. */
export function readBundles(vendorDir: string): VendorBundle[] {
  if (!existsSync(vendorDir)) return [];
  const dirs: string[] = [];
  for (const entry of readdirSync(vendorDir)) {
    const dir = join(vendorDir, entry);
    if (entry.startsWith("@")) for (const inner of readdirSync(dir)) dirs.push(join(dir, inner));
    else dirs.push(dir);
  }
  const bundles: VendorBundle[] = [];
  for (const dir of dirs) {
    try {
      const manifest: unknown = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
      if (isManifest(manifest)) bundles.push({ manifest, dir });
    } catch {
      // No or unreadable manifest: that package loads from node_modules.
    }
  }
  return bundles;
}

/** Registers the hook when there are bundles; returns the packages it redirects. */
export function useVendorBundles(
  vendorDir = join(dirname(fileURLToPath(import.meta.url)), "vendor"),
): string[] {
  const register = (module as { registerHooks?: typeof module.registerHooks }).registerHooks;
  if (typeof register !== "function") return [];
  let bundles: VendorBundle[];
  try {
    bundles = readBundles(vendorDir);
  } catch {
    return [];
  }
  if (bundles.length === 0) return [];
  const versions = new Map<string, string | undefined>();
  const versionOf = (root: string, name: string): string | undefined => {
    if (!versions.has(root)) {
      let version: string | undefined;
      try {
        const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
          name?: string;
          version?: string;
        };
        version = pkg.name === name ? pkg.version : undefined;
      } catch {
        version = undefined;
      }
      versions.set(root, version);
    }
    return versions.get(root);
  };
  register({
    resolve(specifier, context, nextResolve) {
      const resolved = nextResolve(specifier, context);
      const url = bundleRedirect(bundles, resolved.url, versionOf);
      return url ? { ...resolved, url, format: "module" } : resolved;
    },
  });
  return bundles.map((b) => b.manifest.package);
}
