/**
 * Rein's own packages load from their bundles (src/package-bundles.ts,
 * scripts/bundle-packages.mjs): Node resolves as always and only an entry file of an
 * `@rein/` package whose fresh manifest lists it is swapped for the bundle's file; a
 * stale bundle (a `tsc -b` emitted since), another package, another version or any
 * other file loads as is; and a run loads no module twice (a bundle's and its own
 * file), with a plugin's native `import "@rein/sdk"` reaching the CLI's copy.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type PackageBundleManifest,
  packageBundleRedirect,
  reachedByReload,
  readPackageBundle,
} from "../src/package-bundles.js";
import { cacheRoot, machineEnv, REIN_BIN } from "./support/rein-process.js";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..");
const REPO = join(CLI, "..", "..");
const SCRIPT = join(CLI, "scripts/bundle-packages.mjs");
const work = mkdtempSync(join(tmpdir(), "rein-package-bundles-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const manifest = (over: Partial<PackageBundleManifest> = {}): PackageBundleManifest => ({
  package: "@rein/sdk",
  version: "1.2.3",
  stamp: null,
  files: { "dist/index.js": "index.mjs", "dist/shell/index.js": "shell.mjs" },
  modules: {
    "dist/index.js": "index.mjs",
    "dist/errors.js": "chunk-a.mjs",
    "dist/shell/index.js": "shell.mjs",
  },
  ...over,
});

describe("which resolved files are swapped", () => {
  const at = (root: string) => (root === "file:///p/node_modules/@rein/sdk" ? manifest() : undefined);

  it("an entry the package's manifest lists, to the bundle file beside it", () => {
    expect(packageBundleRedirect("file:///p/node_modules/@rein/sdk/dist/shell/index.js", at)).toBe(
      "file:///p/node_modules/@rein/sdk/dist/bundle/shell.mjs",
    );
    expect(packageBundleRedirect("file:///p/node_modules/@rein/sdk/dist/index.js", at)).toBe(
      "file:///p/node_modules/@rein/sdk/dist/bundle/index.mjs",
    );
  });

  it("nothing else: a bundled module that is no entry, another package, a reload's URL, a bundle file, a built-in", () => {
    for (const url of [
      "file:///p/node_modules/@rein/sdk/dist/errors.js",
      "file:///p/node_modules/@rein/sdk/dist/constructor",
      "file:///p/node_modules/@rein/harness/dist/index.js",
      "file:///p/node_modules/@rein/sdk/dist/index.js?rein-reload=2",
      "file:///p/node_modules/@rein/sdk/dist/index.js#x",
      "file:///p/node_modules/@rein/sdk/dist/bundle/index.mjs",
      "file:///p/node_modules/@rein/sdk/index.js",
      "node:fs",
    ])
      expect(packageBundleRedirect(url, at), url).toBeUndefined();
  });
});

describe("a fresh reload keeps its meaning (rein dev)", () => {
  it("a file a reloaded module imports by path, outside node_modules, is left to the reload hook", () => {
    const parent = "file:///work/project/plugin.mjs?rein-reload=3";
    expect(
      reachedByReload("../packages/sdk/dist/index.js", parent, "file:///work/packages/sdk/dist/index.js"),
    ).toBe(true);
    expect(
      reachedByReload("/work/packages/sdk/dist/index.js", parent, "file:///work/packages/sdk/dist/index.js"),
    ).toBe(true);
  });

  it("not a bare import (one copy of @rein/sdk), a package under node_modules, or an import outside a reload", () => {
    const parent = "file:///work/project/plugin.mjs?rein-reload=3";
    expect(reachedByReload("@rein/sdk", parent, "file:///work/packages/sdk/dist/index.js")).toBe(false);
    expect(
      reachedByReload(
        "./node_modules/@rein/sdk/dist/index.js",
        parent,
        "file:///work/project/node_modules/@rein/sdk/dist/index.js",
      ),
    ).toBe(false);
    expect(
      reachedByReload(
        "./dist/index.js",
        "file:///work/packages/sdk/x.js",
        "file:///work/packages/sdk/dist/index.js",
      ),
    ).toBe(false);
  });
});

describe("which manifests count", () => {
  let count = 0;
  /** A package folder with a package.json, a manifest and (unless `published`) a .tsbuildinfo the manifest stamps. */
  function pkg(options: { name?: string; version?: string; manifest?: unknown; published?: boolean } = {}) {
    const root = join(work, `pkg-${++count}`);
    mkdirSync(join(root, "dist/bundle"), { recursive: true });
    writeFileSync(
      join(root, "package.json"),
      JSON.stringify({ name: options.name ?? "@rein/sdk", version: options.version ?? "1.2.3" }),
    );
    let stamp = null;
    if (!options.published) {
      writeFileSync(join(root, "dist/.tsbuildinfo"), "{}");
      const built = { size: 2, mtimeMs: 1_700_000_000_000 };
      utimesSync(join(root, "dist/.tsbuildinfo"), built.mtimeMs / 1000, built.mtimeMs / 1000);
      stamp = built;
    }
    writeFileSync(
      join(root, "dist/bundle/manifest.json"),
      JSON.stringify(options.manifest ?? manifest({ stamp })),
    );
    for (const file of ["index.mjs", "shell.mjs"])
      writeFileSync(join(root, "dist/bundle", file), "export {};\n");
    return root;
  }
  const read = (root: string) => readPackageBundle(pathToFileURL(root).href);

  it("a Rein package's manifest of its own name and version, stamped with its current build", () => {
    expect(read(pkg())?.files["dist/index.js"]).toBe("index.mjs");
  });

  it("a published package's, which ships no .tsbuildinfo", () => {
    expect(read(pkg({ published: true }))?.package).toBe("@rein/sdk");
  });

  it("not once tsc -b emitted again (the stamp no longer matches): the package loads from dist/", () => {
    const root = pkg();
    utimesSync(join(root, "dist/.tsbuildinfo"), new Date(), new Date());
    expect(read(root)).toBeUndefined();
    const rewritten = pkg();
    writeFileSync(join(rewritten, "dist/.tsbuildinfo"), '{"x":1}');
    utimesSync(join(rewritten, "dist/.tsbuildinfo"), 1_700_000_000, 1_700_000_000);
    expect(read(rewritten)).toBeUndefined();
  });

  it("not when the bundle folder or an entry file is a symlink (the swapped-in URL is never resolved again)", () => {
    const elsewhere = pkg();
    const linkedFolder = pkg();
    rmSync(join(linkedFolder, "dist/bundle"), { recursive: true });
    symlinkSync(join(elsewhere, "dist/bundle"), join(linkedFolder, "dist/bundle"));
    expect(read(elsewhere)?.package).toBe("@rein/sdk");
    expect(read(linkedFolder)).toBeUndefined();
    const linkedEntry = pkg();
    rmSync(join(linkedEntry, "dist/bundle/shell.mjs"));
    symlinkSync(join(elsewhere, "dist/bundle/shell.mjs"), join(linkedEntry, "dist/bundle/shell.mjs"));
    expect(read(linkedEntry)).toBeUndefined();
  });

  it("not for another version, another name, a package outside @rein/, or a malformed manifest", () => {
    expect(read(pkg({ version: "1.2.4" }))).toBeUndefined();
    expect(read(pkg({ name: "@rein/harness" }))).toBeUndefined();
    expect(read(pkg({ name: "lodash", manifest: manifest({ package: "lodash" }) }))).toBeUndefined();
    expect(
      read(pkg({ manifest: manifest({ files: { "dist/index.js": "../../evil.mjs" } }) })),
    ).toBeUndefined();
    expect(read(pkg({ manifest: { package: "@rein/sdk", version: "1.2.3" } }))).toBeUndefined();
    expect(read(join(work, "no-such-package"))).toBeUndefined();
  });
});

describe("a rein run with the bundles", () => {
  const roots = ["cli", "harness", "sdk", "plugins/tools-fs", "plugins/tools-shell"];
  let project: string;
  beforeAll(() => {
    // The check's build bundled them already; a plain `tsc -b` since would have made them stale.
    execFileSync(process.execPath, [SCRIPT], { stdio: "pipe" });
    project = join(work, "project");
    mkdirSync(join(project, "node_modules/@rein"), { recursive: true });
    for (const name of ["sdk", "tools-shell", "tools-fs"])
      symlinkSync(
        join(REPO, "packages", name === "sdk" ? "sdk" : `plugins/${name}`),
        join(project, "node_modules/@rein", name),
      );
    writeFileSync(join(project, "package.json"), '{ "type": "module" }\n');
    writeFileSync(
      join(project, "native-tool.mjs"),
      `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "native-tool",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "hello", description: "Says hello", parameters: Type.Object({}), risk: "read",
      execute: async () => ({ content: [{ type: "text", text: "hello from a native plugin" }] }),
    }));
  },
});
`,
    );
    writeFileSync(
      join(project, "rein.config.mjs"),
      `export default {
  model: { script: [{ toolCalls: [{ name: "hello", args: {} }, { name: "bash", args: { command: "echo from-bash" } }] }, "done"] },
  plugins: [["@rein/tools-shell", { sandbox: { mode: "off" } }], "@rein/tools-fs", "./native-tool.mjs"],
};
`,
    );
  }, 120_000);

  it("loads each package's bundle and no module of a bundled package a second time from its own file", () => {
    const probe = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from "node:module";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on("exit", () => process.stderr.write("\\nLOADED " + JSON.stringify(loaded) + "\\n"));`)}`;
    const result = spawnSync(process.execPath, ["--import", probe, REIN_BIN, "run", "--json", "go"], {
      cwd: project,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", REIN_CACHE_DIR: cacheRoot, ...machineEnv },
      timeout: 60_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("hello from a native plugin");
    expect(result.stdout).toContain("from-bash");
    const loaded = JSON.parse(/LOADED (.*)/.exec(result.stderr)?.[1] ?? "[]") as string[];
    for (const root of roots) {
      const dir = join(REPO, "packages", root);
      const bundled = JSON.parse(
        readFileSync(join(dir, "dist/bundle/manifest.json"), "utf8"),
      ) as PackageBundleManifest;
      const base = pathToFileURL(dir).href;
      expect(loaded.filter((url) => url.startsWith(`${base}/dist/bundle/`)).length, root).toBeGreaterThan(0);
      const twice = loaded.filter(
        (url) =>
          url.startsWith(`${base}/dist/`) && Object.hasOwn(bundled.modules, url.slice(base.length + 1)),
      );
      expect(twice, root).toEqual([]);
    }
  });
});

describe("a project's own copy of a Rein package, bundle included, is the project's code", () => {
  it("its bundle file loads only with the bytes `rein trust` recorded", () => {
    execFileSync(process.execPath, [SCRIPT, "--only", "@rein/plugin-guard"], { stdio: "pipe" });
    const dir = join(work, "trusting-project");
    const guard = join(dir, "node_modules/@rein/plugin-guard");
    mkdirSync(guard, { recursive: true });
    // A real copy inside the project (as `npm install` puts it), not Rein's own install.
    cpSync(join(REPO, "packages/plugins/plugin-guard/package.json"), join(guard, "package.json"));
    cpSync(join(REPO, "packages/plugins/plugin-guard/dist"), join(guard, "dist"), { recursive: true });
    rmSync(join(guard, "dist/.tsbuildinfo"), { force: true });
    symlinkSync(join(REPO, "packages/sdk"), join(dir, "node_modules/@rein/sdk"));
    writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
    writeFileSync(
      join(dir, "rein.config.mjs"),
      `export default { model: { script: ["# ok"] }, plugins: [["@rein/plugin-guard", { perRun: { maxTurns: 5 } }]] };\n`,
    );
    const env = {
      ...process.env,
      NO_COLOR: "1",
      REIN_CACHE_DIR: cacheRoot,
      ...machineEnv,
      REIN_TRUST_PROJECT: "",
      XDG_CONFIG_HOME: join(work, "trusting-config"),
    };
    const run = () =>
      spawnSync(process.execPath, [REIN_BIN, "run", "go"], {
        cwd: dir,
        encoding: "utf8",
        env,
        timeout: 60_000,
      });
    const trusted = spawnSync(process.execPath, [REIN_BIN, "trust", "--yes"], {
      cwd: dir,
      encoding: "utf8",
      env,
    });
    expect(trusted.status, trusted.stderr).toBe(0);
    const ok = run();
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("ok");
    appendFileSync(join(guard, "dist/bundle/index.mjs"), "\n// changed after trust\n");
    const refused = run();
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain("dist/bundle/index.mjs");
  });
});
