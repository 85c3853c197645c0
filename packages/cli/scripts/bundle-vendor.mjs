// `node packages/cli/scripts/bundle-vendor.mjs [--out DIR]`: the two third-party packages with the
// most modules on `rein run`'s way to its first model request, each as a few ES
// modules, into `packages/cli/dist/vendor/<name>/` with a `manifest.json` that
// `src/vendor-bundles.ts` reads at start-up. Run after `tsc -b` (the root `build`,
// `release:pack` and the bench do it). Without it the CLI loads them from node_modules.
//
// - typebox (the CLI's, the SDK's and the harness's schema library; ~680 modules):
//   every entry of its `exports`, in ONE build with shared chunks, so the entries
//   share one copy of its internals (its format and settings registries included).
// - @anthropic-ai/sdk (~120 modules; pi-ai's Anthropic provider, its only importer
//   here): its root entry, with its own dependency (standardwebhooks).
// - @earendil-works/pi-schema (41 modules; pi-ai's JSON Schema validator, loaded with
//   pi-ai's root entry on every start): both entries, in one build (one copy of its
//   format registry), no dependencies of its own. Its `sideEffects: false` is not
//   taken at its word: every module's top level runs as it does unbundled.
// - @earendil-works/pi-telemetry (4 modules; pi-ai's telemetry, loaded with its root
//   entry): all three entries in one build, every module's top level kept.
// - commander (7 modules; the CLI's command-line parser, only the CLI imports it):
//   its root entry.
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { findPackageJSON } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "rolldown";
import { importTarget, swapIn } from "./bundle-output.mjs";

const cli = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const here = pathToFileURL(join(cli, "package.json")).href;
const outAt = process.argv.indexOf("--out");
const vendor = outAt > 0 ? resolve(process.argv[outAt + 1]) : join(cli, "dist/vendor");

/** A package's root folder as Node resolves `name` from `parent` (a file URL). */
function packageRoot(name, parent) {
  const file = findPackageJSON(name, parent);
  if (!file || !existsSync(file)) throw new Error(`${name}: not found from ${parent}`);
  return realpathSync(dirname(file));
}

const PACKAGES = [
  { name: "typebox", parent: here, subpaths: "all" },
  {
    name: "@anthropic-ai/sdk",
    parent: pathToFileURL(join(packageRoot("@earendil-works/pi-ai", here), "package.json")).href,
    subpaths: ["."],
  },
  {
    name: "@earendil-works/pi-schema",
    parent: pathToFileURL(join(packageRoot("@earendil-works/pi-ai", here), "package.json")).href,
    subpaths: "all",
    keepSideEffects: true,
  },
  {
    name: "@earendil-works/pi-telemetry",
    parent: pathToFileURL(join(packageRoot("@earendil-works/pi-ai", here), "package.json")).href,
    subpaths: "all",
    keepSideEffects: true,
    platform: "node",
  },
  { name: "commander", parent: here, subpaths: ["."], platform: "node" },
];

// Each bundle is built beside its folder and swapped in by rename only when it changed,
// so a rein starting during a rebuild (the tests do) never finds half a bundle.
for (const { name, parent, subpaths, keepSideEffects, platform } of PACKAGES) {
  const root = packageRoot(name, parent);
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  if (pkg.name !== name) throw new Error(`expected ${name}'s package.json at ${root}`);
  const wanted =
    subpaths === "all" ? Object.keys(pkg.exports).filter((s) => s !== "./package.json") : subpaths;
  const entries = {};
  for (const subpath of wanted) {
    if (subpath.includes("*"))
      throw new Error(`${name} ${pkg.version}: wildcard export ${subpath} cannot be bundled`);
    const file = importTarget(pkg.exports[subpath]);
    if (typeof file !== "string") throw new Error(`${name} ${pkg.version}: no import target for ${subpath}`);
    entries[subpath === "." ? "index" : subpath.slice(2).replaceAll("/", "-")] = file.replace(/^\.\//, "");
  }
  const out = join(vendor, name);
  // Staged outside the vendor folder, which the CLI reads (a staged manifest would be read).
  const next = join(dirname(vendor), ".vendor-next", name);
  rmSync(next, { recursive: true, force: true });
  await build({
    input: Object.fromEntries(Object.entries(entries).map(([entry, file]) => [entry, join(root, file)])),
    output: { dir: next, format: "esm", entryFileNames: "[name].mjs", chunkFileNames: "chunk-[hash].mjs" },
    preserveEntrySignatures: "strict",
    ...(keepSideEffects ? { treeshake: { moduleSideEffects: true } } : {}),
    ...(platform ? { platform } : {}),
    logLevel: "warn",
  });
  const files = Object.fromEntries(Object.entries(entries).map(([entry, file]) => [file, `${entry}.mjs`]));
  writeFileSync(
    join(next, "manifest.json"),
    `${JSON.stringify({ package: name, version: pkg.version, files }, null, 2)}\n`,
  );
  swapIn(next, out, join(dirname(vendor), ".vendor-old", name));
  console.log(`${name} ${pkg.version}: ${Object.keys(entries).length} entries bundled into ${out}`);
}
rmSync(join(dirname(vendor), ".vendor-next"), { recursive: true, force: true });
rmSync(join(dirname(vendor), ".vendor-old"), { recursive: true, force: true });
