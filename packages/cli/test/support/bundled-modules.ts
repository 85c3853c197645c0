/**
 * Which of Rein's own source modules a process loaded, when they load from their
 * packages' bundles (src/package-bundles.ts): a bundle file stands for every module
 * its manifest lists in it. Tests that check what a command loads, or plant something
 * for "a module every start loads", go through these, so they still name real files.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type PackageBundleManifest, readPackageBundle } from "../../src/package-bundles.js";

const BUNDLE = "/dist/bundle/";

const manifests = new Map<string, PackageBundleManifest | undefined>();
function manifestOf(rootUrl: string): PackageBundleManifest | undefined {
  if (!manifests.has(rootUrl)) manifests.set(rootUrl, readPackageBundle(rootUrl));
  return manifests.get(rootUrl);
}

/** `urls` (loaded or resolved file URLs) with each bundle file replaced by the source modules it holds. */
export function sourceModules(urls: readonly string[]): string[] {
  const out: string[] = [];
  for (const url of urls) {
    const at = url.lastIndexOf(BUNDLE);
    const manifest = at < 0 ? undefined : manifestOf(url.slice(0, at));
    if (manifest === undefined) {
      out.push(url);
      continue;
    }
    const root = url.slice(0, at);
    const file = url.slice(at + BUNDLE.length);
    for (const [module, holder] of Object.entries(manifest.modules))
      if (holder === file) out.push(`${root}/${module}`);
  }
  return out;
}

/** The file Node runs for Rein's source module `file` (a `dist/` path): its bundle file when the package's bundle is in use. */
export function fileRunFor(file: string): string {
  const at = file.lastIndexOf("/dist/");
  const root = file.slice(0, at);
  if (at < 0 || !existsSync(join(root, "dist/bundle/manifest.json"))) return file;
  const manifest = manifestOf(pathToFileURL(root).href);
  const holder = manifest?.modules[file.slice(at + 1)];
  return holder === undefined ? file : join(root, "dist/bundle", holder);
}

/** Whether the built packages are bundled now (the check's build does it; a plain `tsc -b` does not). */
export function packagesBundled(): boolean {
  const cli = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
  return readPackageBundle(pathToFileURL(cli).href) !== undefined;
}
