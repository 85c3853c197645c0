/**
 * The install flow outside the repository, end to end, as the CLI README tells it
 * (nothing under @rein/* is on the registry yet): `pnpm release:pack` packs every
 * package (workspace versions rewritten as published) and prints the npm install
 * line, which runs verbatim in a fresh project outside the workspace; `rein tools`
 * and a scripted `rein run` work there. Every `rein init` mode's printed `next:`
 * line then runs verbatim: the project scaffold in a fresh `npm init -y` project
 * (its `npm test` and `rein run`), and `--plugin` / `--tool-pack` in fresh folders
 * (npm install, the scaffold's own `npm test` and `npm pack`), the packed packages
 * used from a config in a third folder. Our packages come only from the tarballs;
 * third-party dependencies come from npm's cache or the npm registry.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project } from "./support/rein-process.js";

const tarballs = mkdtempSync(join(tmpdir(), "rein-pack-"));
/** Folders with npm installs: removed concurrently (several node_modules trees are slow to delete). */
const installed: string[] = [tarballs];
afterAll(async () => {
  await Promise.all(installed.map((dir) => rm(dir, { recursive: true, force: true })));
  cleanup();
}, 600_000);

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const NPM_INSTALL = ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"];
// The same settings for commands run verbatim as printed (npm reads npm_config_* from the environment).
const npmEnv = {
  ...process.env,
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_prefer_offline: "true",
  npm_config_loglevel: "error",
};
/** A printed command line, run as a person would paste it into a shell. */
const shell = (line: string, cwd: string, env: NodeJS.ProcessEnv = npmEnv) =>
  run("sh", ["-c", line], cwd, env);
/** The command after `next: ` on a line of `output` (up to a parenthesised note). */
const nextStep = (output: string) => {
  const line = output.split("\n").find((l) => l.startsWith("next: "));
  if (!line) throw new Error(`no next: line in ${output}`);
  return line.slice("next: ".length).replace(/ \(.*\)$/, "");
};
let projectInstall = "";

/** Runs a command without blocking the event loop, so independent installs overlap. */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env, input = "") {
  return new Promise<{ status: number | null; output: string }>((done) => {
    const child = spawn(command, args, { cwd, env });
    // Typed ahead, as a person answering a prompt would; the pipe stays open until the command ends.
    if (input) child.stdin.write(input);
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    child.on("close", (status) => done({ status, output }));
  });
}

/** Every `.d.ts.map` / `.js.map` under `dir` whose sources are not in the package. */
function danglingMaps(dir: string): string[] {
  const dangling: string[] = [];
  for (const name of readdirSync(dir, { recursive: true }).map(String)) {
    if (!name.endsWith(".map") || name.includes("node_modules")) continue;
    const file = join(dir, name);
    const map = JSON.parse(readFileSync(file, "utf8")) as { sources: string[]; sourceRoot?: string };
    for (const source of map.sources) {
      if (!existsSync(resolve(dirname(file), map.sourceRoot ?? "", source)))
        dangling.push(`${name} -> ${source}`);
    }
  }
  return dangling;
}

const tarball = (prefix: string) => {
  const file = readdirSync(tarballs).find((f) => f.startsWith(prefix) && f.endsWith(".tgz"));
  if (!file) throw new Error(`no tarball ${prefix}*`);
  return join(tarballs, file);
};

describe("published packages install and run outside the workspace", { timeout: 900_000 }, () => {
  let app = "";
  // Trust checks on: Rein installed inside the project checks the project's packages, not its own.
  const env = () => ({
    ...process.env,
    NO_COLOR: "1",
    REIN_CACHE_DIR: join(app, ".cache"),
    REIN_TRUST_PROJECT: "",
  });
  const bin = () => join(app, "node_modules", ".bin", "rein");

  it("release:pack packs every package and prints an install line that works verbatim; the tool pack's tools list and a scripted agent runs", async () => {
    const packed = execFileSync(
      process.execPath,
      [join(root, "scripts/release-pack.mjs"), "--out", tarballs],
      {
        encoding: "utf8",
      },
    );
    const lines = packed.split("\n").filter((line) => line.startsWith("  npm install -D "));
    projectInstall = (lines[0] as string).trim();
    for (const name of ["cli", "harness", "sdk", "plugin-permissions", "plugin-policy", "tools-shell"])
      expect(projectInstall).toContain(join(tarballs, `rein-${name}-0.1.0.tgz`));
    // Every other package gets a line of its own; together: every publishable package, once.
    expect(lines.slice(1).map((line) => line.trim())).toEqual(
      expect.arrayContaining([`npm install -D ${join(tarballs, "rein-tools-fs-0.1.0.tgz")}`]),
    );
    const listed = lines.flatMap((line) => line.trim().split(" ").slice(3));
    expect(listed.sort()).toEqual(
      readdirSync(tarballs)
        .filter((f) => f.endsWith(".tgz"))
        .map((f) => join(tarballs, f))
        .sort(),
    );
    execFileSync("npx", ["--yes", "pnpm@10.34.9", "pack", "--pack-destination", tarballs], {
      cwd: join(root, "examples/tool-pack"),
      stdio: "pipe",
    });

    app = project({
      "package.json": JSON.stringify({ name: "fresh-app", private: true, type: "module" }),
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  model: { script: [{ toolCalls: [{ name: "days_between", args: { from: "2026-01-01", to: "2026-12-25" } }] }, "358 days to go."] },
  plugins: ["@rein-examples/tools-time"],
});
`,
    });
    installed.push(app);
    const install = await shell(`${projectInstall} ${tarball("rein-examples-tools-time-")}`, app);
    expect(install.status, install.output).toBe(0);

    // Never trusted: refused; after rein trust, the installed tool pack is recorded and runs.
    const untrusted = spawnSync(bin(), ["tools"], { cwd: app, encoding: "utf8", env: env() });
    expect(untrusted.status).toBe(2);
    expect(untrusted.stderr).toContain("this project's code was never trusted here");
    const trusted = spawnSync(bin(), ["trust", "--yes"], { cwd: app, encoding: "utf8", env: env() });
    expect(trusted.status, trusted.stderr).toBe(0);
    expect(trusted.stderr).toContain("node_modules/@rein-examples/tools-time/");
    expect(trusted.stderr).not.toContain("node_modules/@rein/sdk/");

    const tools = spawnSync(bin(), ["tools"], { cwd: app, encoding: "utf8", env: env() });
    expect(tools.status, tools.stderr).toBe(0);
    expect(tools.stdout).toContain("now");
    expect(tools.stdout).toContain("days_between");

    const runResult = spawnSync(bin(), ["run", "How long until Christmas?"], {
      cwd: app,
      encoding: "utf8",
      env: env(),
    });
    expect(runResult.status, runResult.stderr).toBe(0);
    expect(runResult.stderr).toContain("✓ 358");
    expect(runResult.stdout).toContain("358 days to go.");
  });

  it("the installed CLI loads typebox and commander from their bundles, no file of a bundled package from node_modules", () => {
    const cli = join(app, "node_modules/@rein/cli");
    const probe = `data:text/javascript,${encodeURIComponent(`
import { registerHooks } from "node:module";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on("exit", () => process.stderr.write("\\nLOADED " + JSON.stringify(loaded) + "\\n"));`)}`;
    const result = spawnSync(process.execPath, ["--import", probe, join(cli, "bin/rein.js"), "tools"], {
      cwd: app,
      encoding: "utf8",
      env: env(),
    });
    expect(result.status, result.stderr).toBe(0);
    const loaded = JSON.parse(/LOADED (.*)/.exec(result.stderr)?.[1] ?? "[]") as string[];
    const vendor = pathToFileURL(join(realpathSync(cli), "dist/vendor")).href;
    expect(loaded.filter((url) => url.startsWith(`${vendor}/typebox/`)).length).toBeGreaterThan(0);
    expect(loaded.filter((url) => url.startsWith(`${vendor}/commander/`)).length).toBeGreaterThan(0);
    // No file of a bundled package from node_modules, where npm puts every file of the install.
    expect(
      loaded.filter((url) =>
        /\/node_modules\/(typebox|commander|@anthropic-ai\/sdk|@earendil-works\/pi-schema|@earendil-works\/pi-telemetry)\//.test(
          url,
        ),
      ),
    ).toEqual([]);
    expect(loaded.length).toBeLessThan(600);
  });

  it("ships the sources its .d.ts.map and .js.map files point at", () => {
    for (const name of ["@rein/harness", "@rein/sdk", "@rein/cli", "@rein-examples/tools-time"]) {
      const dir = join(app, "node_modules", name);
      expect(readdirSync(join(dir, "dist")).some((f) => f.endsWith(".d.ts.map"))).toBe(true);
      expect(danglingMaps(dir), name).toEqual([]);
    }
  });

  it("rein init in a fresh npm project: its printed next step runs verbatim, npm test runs the plugin's test", async () => {
    const dir = project({});
    installed.push(dir);
    expect((await shell("npm init -y", dir)).status).toBe(0);
    const install = await shell(projectInstall, dir);
    expect(install.status, install.output).toBe(0);
    const init = await shell("npx rein init", dir, { ...npmEnv, NO_COLOR: "1", REIN_TRUST_PROJECT: "" });
    expect(init.status, init.output).toBe(0);
    const next = nextStep(init.output);
    expect(next).toBe('npm install && npx rein trust && npx rein run "hello"');
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg.scripts.test).toBe("vitest run");
    // rein trust asks on a terminal: the step runs in one (script(1)), answering y.
    const steps = await run(
      "script",
      ["-qec", next, "/dev/null"],
      dir,
      { ...npmEnv, NO_COLOR: "1", REIN_TRUST_PROJECT: "", REIN_CACHE_DIR: join(dir, ".cache") },
      "y\n",
    );
    expect(steps.status, steps.output).toBe(0);
    expect(steps.output).toContain("noted: hello from rein");
    const test = await shell("npm test", dir);
    expect(test.status, test.output).toBe(0);
    expect(test.output).toMatch(/1 passed/);
  });

  it("scaffolds a plugin and a tool pack that install, test and pack on their own, and a config uses them", async () => {
    const kinds = ["plugin", "tool-pack"] as const;
    const folders = kinds.map(() => project({}));
    installed.push(...folders);
    await Promise.all(
      kinds.map(async (kind, i) => {
        const dir = folders[i] as string;
        const init = spawnSync(bin(), ["init", `--${kind}`, "--name", `@acme/rein-${kind}`], {
          cwd: dir,
          encoding: "utf8",
          env: env(),
        });
        expect(init.status, init.stderr).toBe(0);
        // The scaffold's devDependency on @rein/sdk comes from the tarball the CLI came from.
        const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
        expect(pkg.devDependencies["@rein/sdk"]).toBe(`file:${tarball("rein-sdk-")}`);
        // The printed next step, verbatim: npm install && npm test && npm pack.
        const next = nextStep(init.stderr);
        expect(next).toBe("npm install && npm test && npm pack");
        const steps = await shell(next, dir);
        expect(steps.status, steps.output).toBe(0);
        expect(steps.output).toMatch(/2 passed/);
        const typecheck = await run("npm", ["run", "typecheck"], dir);
        expect(typecheck.status, typecheck.output).toBe(0);
        const packedFile = readdirSync(dir).find((f) => f.endsWith(".tgz")) as string;
        renameSync(join(dir, packedFile), join(tarballs, packedFile));
      }),
    );
    const pluginTarball = tarball("acme-rein-plugin-");
    const packTarball = tarball("acme-rein-tool-pack-");
    const listing = spawnSync("tar", ["-tzf", packTarball], { encoding: "utf8" }).stdout;
    expect(listing).toContain("package/dist/index.js");
    expect(listing).toContain("package/dist/index.d.ts");

    // The third folder: the app, now with the two packed packages.
    const install = spawnSync("npm", [...NPM_INSTALL, pluginTarball, packTarball], {
      cwd: app,
      encoding: "utf8",
    });
    expect(install.status, install.stderr).toBe(0);
    writeFileSync(
      join(app, "rein.config.ts"),
      `import { defineConfig, defineTool, Type } from "@rein/sdk";

// A tool that declares its path argument, so the gate sees the canonical path.
const openFile = defineTool({
  name: "open_file",
  description: "Open a file",
  parameters: Type.Object({ path: Type.String() }),
  paths: { path: "file" },
  risk: "read",
  execute: async () => ({ content: [{ type: "text", text: "opened" }] }),
});

export default defineConfig({
  model: {
    script: [
      { toolCalls: [{ name: "count_words", args: { text: "to be or not to be" } }] },
      { toolCalls: [{ name: "count_words", args: { text: "see .env" } }] },
      { toolCalls: [{ name: "open_file", args: { path: "docs/../.env" } }] },
      "Counted.",
    ],
  },
  plugins: ["@acme/rein-tool-pack", ["@acme/rein-plugin", { protect: [".env"] }], [openFile]],
});
`,
    );
    // A new config and new packages: trusted again before they run.
    const changed = spawnSync(bin(), ["tools"], { cwd: app, encoding: "utf8", env: env() });
    expect(changed.stderr).toContain("rein.config.ts (changed)");
    const trusted = spawnSync(bin(), ["trust", "--yes"], { cwd: app, encoding: "utf8", env: env() });
    expect(trusted.status, trusted.stderr).toBe(0);
    expect(trusted.stderr).toContain("node_modules/@acme/rein-plugin/");
    const tools = spawnSync(bin(), ["tools"], { cwd: app, encoding: "utf8", env: env() });
    expect(tools.status, tools.stderr).toBe(0);
    expect(tools.stdout).toContain("count_words");
    const plugins = spawnSync(bin(), ["plugins"], { cwd: app, encoding: "utf8", env: env() });
    expect(plugins.stdout).toContain("rein-plugin");
    expect(plugins.stdout).toContain("taps toolGate");

    const agent = spawnSync(bin(), ["run", "--json", "count"], { cwd: app, encoding: "utf8", env: env() });
    expect(agent.status, agent.stderr).toBe(0);
    const events = agent.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    const decisions = events.filter((e) => e.type === "tool_decision");
    expect(decisions.map((d) => [d.toolName, d.decision, d.by])).toEqual([
      ["count_words", "allow", "harness:default"],
      // Text that mentions .env is no path: the scaffolded gate decides on path facts.
      ["count_words", "allow", "harness:default"],
      ["open_file", "deny", "rein-plugin:protected-path"],
    ]);
    const ends = events.filter((e) => e.type === "tool_execution_end") as {
      result?: { content?: { text?: string }[] };
    }[];
    expect(ends[0]?.result?.content?.[0]?.text).toMatch(/^6 words\nbe 2\nto 2\nnot 1\nor 1$/);
  });
});
