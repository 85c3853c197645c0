// `node packages/cli/scripts/bundle-packages.mjs [--only NAME ...]`: each of Rein's own
// publishable packages (packages/*, packages/plugins/*; not the private ones) as a few
// ES modules in its own `dist/bundle/`, with a `manifest.json` that
// `src/package-bundles.ts` reads at start-up. Run after `tsc -b` (the root `build`,
// `release:pack`, the bench and `scripts/check.sh` do it). Without it every package
// loads from its `dist/` files, as before.
//
// - One build per package, of its exported entries (the CLI's `dist/main.js` too), with
//   shared chunks: one copy of each module whichever entry loads it. Every bare import
//   (another package, Rein's own included, and Node's built-ins) stays an import, so it
//   resolves from the package's own folder exactly as unbundled; a relative import that
//   leaves the package's `dist/` fails the build.
// - Every module's top level is kept (no side-effect pruning), dynamic imports stay
//   dynamic (their modules load when they did).
// - `import.meta.url` is rewritten in each module to the URL of the module's own `dist/`
//   file, so what a module finds beside itself (package.json, the hook daemon's entry,
//   the migrations) is what it found unbundled. Any other `import.meta` use but
//   `import.meta.resolve` of a bare name fails the build.
// - The manifest records the package's name and version, the size and mtime of its
//   `dist/.tsbuildinfo` (a `tsc -b` that emits again makes the bundle stale, and it is
//   then not used), the entry files it replaces and, for tools and tests, which bundle
//   file holds each source module.
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { parseAst } from "rolldown/parseAst";
import { importTarget, mergeIn } from "./bundle-output.mjs";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const only = [];
for (let i = process.argv.indexOf("--only"); i > 0; i = process.argv.indexOf("--only", i + 1))
  only.push(process.argv[i + 1]);

const packageDirs = [
  ...readdirSync(join(repo, "packages")).map((name) => join(repo, "packages", name)),
  ...readdirSync(join(repo, "packages/plugins")).map((name) => join(repo, "packages/plugins", name)),
].filter((dir) => existsSync(join(dir, "package.json")) && existsSync(join(dir, "dist")));

const isBare = (id) => !id.startsWith(".") && !id.startsWith("/") && !id.startsWith("\0");

function visit(node, enter) {
  if (Array.isArray(node)) for (const item of node) visit(item, enter);
  else if (node !== null && typeof node === "object") {
    if (typeof node.type === "string") enter(node);
    for (const [key, value] of Object.entries(node)) if (key !== "parent") visit(value, enter);
  }
}

/**
 * `code` with each `import.meta.url` replaced by the URL of `own` (a path relative to the
 * bundle folder); throws on any other `import.meta` but `import.meta.resolve("<bare>")`.
 */
function ownModuleUrl(code, own, where) {
  const metas = [];
  const urls = [];
  const resolves = new Set();
  visit(parseAst(code), (node) => {
    if (node.type === "MetaProperty") metas.push(node);
    const callee = node.type === "CallExpression" ? node.callee : undefined;
    if (
      callee?.type === "MemberExpression" &&
      callee.object.type === "MetaProperty" &&
      callee.property.name === "resolve" &&
      node.arguments[0]?.type === "Literal" &&
      typeof node.arguments[0].value === "string" &&
      isBare(node.arguments[0].value)
    )
      resolves.add(callee.object.start);
    if (
      node.type === "MemberExpression" &&
      node.object.type === "MetaProperty" &&
      !node.computed &&
      node.property.name === "url"
    )
      urls.push(node);
  });
  const rewritten = new Set(urls.map((u) => u.object.start));
  for (const meta of metas)
    if (!rewritten.has(meta.start) && !resolves.has(meta.start))
      throw new Error(
        `${where} uses \`${code.slice(meta.start, meta.start + 40)}\`, which a bundle would change`,
      );
  let result = code;
  for (const url of urls.sort((a, b) => b.start - a.start))
    result = `${result.slice(0, url.start)}new URL(${JSON.stringify(own)}, import.meta.url).href${result.slice(url.end)}`;
  return result;
}

for (const root of packageDirs) {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  if (pkg.private || !pkg.name?.startsWith("@rein/") || pkg.exports === undefined) continue;
  if (only.length > 0 && !only.includes(pkg.name)) continue;
  const dist = join(root, "dist");
  const entries = {};
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (subpath === "./package.json") continue;
    const file = importTarget(target);
    if (
      subpath.includes("*") ||
      typeof file !== "string" ||
      !file.startsWith("./dist/") ||
      !file.endsWith(".js")
    )
      throw new Error(`${pkg.name}: export ${subpath} is not one dist/*.js file, so it cannot be bundled`);
    entries[subpath === "." ? "index" : subpath.slice(2).replaceAll("/", "-")] = file.slice(2);
  }
  if (pkg.name === "@rein/cli") entries.main = "dist/main.js";

  const out = join(dist, "bundle");
  // Staged beside the bundle, moved in file by file (bundle-output.mjs).
  const next = join(dist, ".bundle-next");
  rmSync(next, { recursive: true, force: true });
  const result = await build({
    input: Object.fromEntries(Object.entries(entries).map(([name, file]) => [name, join(root, file)])),
    external: (id) => isBare(id),
    output: { dir: next, format: "esm", entryFileNames: "[name].mjs", chunkFileNames: "chunk-[hash].mjs" },
    preserveEntrySignatures: "strict",
    treeshake: { moduleSideEffects: true },
    platform: "node",
    logLevel: "warn",
    plugins: [
      {
        name: "rein-own-module-url",
        resolveId: {
          order: "post",
          handler(id, importer) {
            // A package's own `#imports` would resolve, from the bundle, to its dist/ files: a second copy.
            if (id.startsWith("#"))
              throw new Error(
                `${pkg.name}: ${relative(root, importer ?? root)} imports ${id}; package imports cannot be bundled`,
              );
            if (importer === undefined || isBare(id)) return null;
            const file = resolve(dirname(importer), id);
            if (!file.startsWith(dist + sep))
              throw new Error(`${pkg.name}: ${relative(root, importer)} imports ${id}, outside its dist/`);
            return null;
          },
        },
        transform(code, id) {
          if (!code.includes("import.meta")) return null;
          const own = relative(out, id).split(sep).join("/");
          return { code: ownModuleUrl(code, own, `${pkg.name}: ${relative(root, id)}`) };
        },
      },
    ],
  });
  const modules = {};
  for (const chunk of result.output) {
    if (chunk.type !== "chunk") continue;
    for (const id of chunk.moduleIds)
      if (id.startsWith(dist + sep)) modules[relative(root, id).split(sep).join("/")] = chunk.fileName;
  }
  const stamp = existsSync(join(dist, ".tsbuildinfo")) ? statSync(join(dist, ".tsbuildinfo")) : undefined;
  const manifest = {
    package: pkg.name,
    version: pkg.version,
    stamp: stamp ? { size: stamp.size, mtimeMs: stamp.mtimeMs } : null,
    files: Object.fromEntries(Object.entries(entries).map(([name, file]) => [file, `${name}.mjs`])),
    modules,
  };
  writeFileSync(join(next, "manifest.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  mergeIn(next, out);
  console.log(`${pkg.name} ${pkg.version}: ${Object.keys(modules).length} modules in ${relative(repo, out)}`);
}
