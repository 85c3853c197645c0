// `pnpm release:pack [--out DIR]`: packs every publishable package (packages/*,
// packages/plugins/*; not the private ones) into one folder, as `pnpm publish`
// would (workspace ranges rewritten to versions), and prints the exact
// `npm install` lines for them. Nothing under @rein/* is on the npm registry yet:
// this is how to install Rein outside the repository until it is.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const outAt = process.argv.indexOf("--out");
const out = resolve(outAt > 0 ? process.argv[outAt + 1] : join(root, "release"));

const dirs = [
  ...readdirSync(join(root, "packages")).map((name) => join(root, "packages", name)),
  ...readdirSync(join(root, "packages", "plugins")).map((name) => join(root, "packages", "plugins", name)),
].filter((dir) => existsSync(join(dir, "package.json")));
const manifests = new Map();
for (const dir of dirs) {
  const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  if (!manifest.private) manifests.set(manifest.name, { dir, manifest });
}

// pnpm itself when run as `pnpm release:pack`, else the pinned one through npx.
const pnpm = process.env.npm_execpath?.includes("pnpm")
  ? [process.execPath, process.env.npm_execpath]
  : ["npx", "--yes", "pnpm@10.34.9"];
mkdirSync(out, { recursive: true });
for (const name of readdirSync(out)) if (name.endsWith(".tgz")) rmSync(join(out, name));
// The CLI ships typebox and the Anthropic SDK bundled (packages/cli/src/vendor-bundles.ts).
execFileSync(process.execPath, [join(root, "packages/cli/scripts/bundle-vendor.mjs")], { stdio: "pipe" });
// Each package ships its own modules bundled too (packages/cli/src/package-bundles.ts).
execFileSync(process.execPath, [join(root, "packages/cli/scripts/bundle-packages.mjs")], { stdio: "pipe" });
for (const { dir } of manifests.values()) {
  execFileSync(pnpm[0], [...pnpm.slice(1), "pack", "--pack-destination", out], { cwd: dir, stdio: "pipe" });
}

const tarball = (name) =>
  join(out, `${name.slice(1).replace("/", "-")}-${manifests.get(name).manifest.version}.tgz`);
/** `names` and every @rein/* package they depend on at run time, as tarballs. */
function closure(names) {
  const seen = new Set();
  const queue = [...names];
  while (queue.length > 0) {
    const name = queue.pop();
    if (seen.has(name) || !manifests.has(name)) continue;
    seen.add(name);
    const { manifest } = manifests.get(name);
    // Optional peers (the CLI's @rein/store-postgres) are left to the project.
    const peers = Object.keys(manifest.peerDependencies ?? {}).filter(
      (n) => !manifest.peerDependenciesMeta?.[n]?.optional,
    );
    queue.push(
      ...[...Object.keys(manifest.dependencies ?? {}), ...peers].filter((n) => n.startsWith("@rein/")),
    );
  }
  return [...seen].sort().map(tarball);
}

// A project as `rein init` scaffolds it: the CLI (and what it loads), the SDK, permissions, the shell tools.
const project = closure(["@rein/cli", "@rein/sdk", "@rein/plugin-permissions", "@rein/tools-shell"]);
const rest = [...manifests.keys()]
  .sort()
  .map(tarball)
  .filter((file) => !project.includes(file));
for (const file of [...project, ...rest]) if (!existsSync(file)) throw new Error(`pnpm pack made no ${file}`);
const lines = [
  `packed ${manifests.size} packages into ${out}`,
  "",
  "A project (then npx rein init, and the next: line it prints):",
  `  npm install -D ${project.join(" ")}`,
  "",
  "More plugins, as the project needs them:",
  ...rest.map((file) => `  npm install -D ${file}`),
  "",
];
process.stdout.write(`${lines.join("\n")}`);
