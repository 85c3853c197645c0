/**
 * `rein init` output works as written: the project scaffold runs, typechecks with
 * `tsc` and its test passes; `--plugin` / `--tool-pack` packages typecheck, build
 * and pass their own tests. Dependencies are the workspace's own packages linked
 * into node_modules (the packaging test does the same with npm and tarballs).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup, 60_000);

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const LINKS: Record<string, string> = {
  "@rein/sdk": "packages/sdk",
  vitest: "node_modules/vitest",
  typescript: "node_modules/typescript",
  "@types/node": "node_modules/@types/node",
};

function linkDependencies(dir: string): void {
  for (const [name, target] of Object.entries(LINKS)) {
    mkdirSync(dirname(join(dir, "node_modules", name)), { recursive: true });
    symlinkSync(join(root, target), join(dir, "node_modules", name), "dir");
  }
}

const node = (dir: string, script: string, args: string[]) =>
  spawnSync(process.execPath, [join(root, script), ...args], { cwd: dir, encoding: "utf8" });
const tsc = (dir: string, args: string[] = []) => node(dir, "node_modules/typescript/bin/tsc", args);
const vitest = (dir: string) => node(dir, "node_modules/vitest/vitest.mjs", ["run", "--root", dir]);

describe("rein init", { timeout: 120_000 }, () => {
  it("scaffolds a config and a plugin that run, typecheck and test as they are, and refuses to overwrite", async () => {
    const dir = project({});
    const init = await rein(["init"], dir);
    expect(init.code).toBe(0);
    for (const file of [
      "rein.config.ts",
      "plugins/no-secrets.ts",
      "plugins/no-secrets.test.ts",
      "tsconfig.json",
      "package.json",
    ]) {
      expect(existsSync(join(dir, file))).toBe(true);
    }
    expect(readFileSync(join(dir, "rein.config.ts"), "utf8")).toContain(
      '["@rein/tools-shell", { sandbox: { mode: "workspace-write"',
    );
    // The local config layer (grants, this machine's overrides) stays out of git.
    expect(readFileSync(join(dir, ".gitignore"), "utf8").split("\n")).toEqual(
      expect.arrayContaining([".rein/local.json", ".rein/sessions/"]),
    );
    // As `npm install -D @rein/tools-shell` would: the config's shell plugin resolves from the project.
    const shell = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "plugins", "tools-shell");
    mkdirSync(join(dir, "node_modules", "@rein"), { recursive: true });
    symlinkSync(shell, join(dir, "node_modules", "@rein", "tools-shell"), "dir");
    const doctor = await rein(["doctor"], dir);
    expect(doctor.stdout).toMatch(/✓ sandbox +workspace-write: works on this machine/);
    expect(doctor.code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({ type: "module", scripts: { test: "vitest run", typecheck: "tsc" } });
    expect(Object.keys(pkg.devDependencies)).toEqual(
      expect.arrayContaining(["@rein/cli", "@rein/sdk", "typescript", "vitest"]),
    );
    const run = await rein(["run", "hello"], dir);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("noted: hello from rein");
    // The default project asks before shell commands (permissions on, bash sandboxed), never allows them.
    const push = await rein(["check", "bash(git push origin main)", "--json"], dir);
    expect(JSON.parse(push.stdout)).toMatchObject({ decision: "ask" });
    // Without @rein/plugin-permissions the harness's default would be allow.
    expect(JSON.parse(push.stdout).reason).toMatch(/default for exec tools is ask/);
    expect(readFileSync(join(dir, "rein.config.ts"), "utf8")).toContain('"@rein/plugin-permissions",');
    // Run from the workspace (not from packed tarballs), it says the registry has no @rein packages yet.
    expect(init.stderr).toContain("next: the @rein packages are not on the npm registry yet");
    expect(init.stderr).toContain("pnpm release:pack");

    linkDependencies(dir);
    const typecheck = tsc(dir);
    expect(typecheck.status, typecheck.stdout + typecheck.stderr).toBe(0);
    const test = vitest(dir);
    expect(test.status, test.stdout + test.stderr).toBe(0);
    expect(test.stdout).toMatch(/1 passed/);

    const again = await rein(["init"], dir);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("--force");
  });

  it("rein doctor fails the sandbox check when the configured sandbox cannot start, saying what to install", async () => {
    const dir = project({
      "rein.config.mjs": `export default { model: { script: ["hi"] }, plugins: [["@rein/tools-shell", { sandbox: { bwrapPath: "/nonexistent/bwrap" } }]] };\n`,
    });
    const shell = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "plugins", "tools-shell");
    mkdirSync(join(dir, "node_modules", "@rein"), { recursive: true });
    symlinkSync(shell, join(dir, "node_modules", "@rein", "tools-shell"), "dir");
    const doctor = await rein(["doctor"], dir);
    expect(doctor.code).toBe(2);
    expect(doctor.stdout).toMatch(
      /✗ sandbox +workspace-write: does not work on this machine: .*\/nonexistent\/bwrap/,
    );
    expect(doctor.stdout).toContain("apt-get install bubblewrap socat");
    expect(doctor.stdout).toContain('sandbox: { mode: "off" }');
  });

  it("keeps an existing package.json and adds only what it lacks; its own test script runs before the plugin's", async () => {
    const dir = project({
      "package.json": JSON.stringify({ name: "mine", version: "2.0.0", scripts: { test: "node --test" } }),
    });
    expect((await rein(["init"], dir)).code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg).toMatchObject({
      name: "mine",
      version: "2.0.0",
      type: "module",
      scripts: { test: "node --test && vitest run" },
    });
  });

  it("in an npm init project: replaces npm's failing test script and never lists a dependency twice", async () => {
    const dir = project({
      "package.json": JSON.stringify({
        name: "npm-made",
        version: "1.0.0",
        scripts: { test: 'echo "Error: no test specified" && exit 1' },
        dependencies: { "@rein/cli": "file:../rein-cli-0.1.0.tgz", "@rein/sdk": "^0.1.0" },
        devDependencies: { vitest: "^5.0.0" },
      }),
    });
    expect((await rein(["init"], dir)).code).toBe(0);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    expect(pkg.scripts.test).toBe("vitest run");
    expect(pkg.dependencies).toEqual({ "@rein/cli": "file:../rein-cli-0.1.0.tgz", "@rein/sdk": "^0.1.0" });
    expect(pkg.devDependencies).toMatchObject({ vitest: "^5.0.0", "@rein/tools-shell": expect.any(String) });
    expect(Object.keys(pkg.devDependencies)).not.toContain("@rein/cli");
    expect(Object.keys(pkg.devDependencies)).not.toContain("@rein/sdk");
    const both = Object.keys(pkg.devDependencies).filter((name) => name in pkg.dependencies);
    expect(both).toEqual([]);
    // A script that runs vitest already is kept as it is.
    const again = project({ "package.json": JSON.stringify({ scripts: { test: "vitest run --coverage" } }) });
    expect((await rein(["init"], again)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(again, "package.json"), "utf8")).scripts.test).toBe(
      "vitest run --coverage",
    );
  });

  it("keeps an existing .gitignore and appends only the lines it lacks", async () => {
    const dir = project({ ".gitignore": "node_modules\n.rein/sessions/\n" });
    expect((await rein(["init"], dir)).code).toBe(0);
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toBe(
      "node_modules\n.rein/sessions/\n# rein: this machine's config layer and grants, and sessions\n.rein/local.json\n",
    );
  });

  for (const kind of ["plugin", "tool-pack"] as const) {
    it(`--${kind} scaffolds a standalone package that typechecks, builds and passes its own test`, async () => {
      const dir = project({});
      const init = await rein(["init", `--${kind}`, "--name", `@acme/rein-${kind}`], dir);
      expect(init.code, init.stderr).toBe(0);
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      expect(pkg).toMatchObject({
        name: `@acme/rein-${kind}`,
        type: "module",
        scripts: { build: expect.any(String), test: "vitest run" },
        peerDependencies: { "@rein/sdk": expect.stringMatching(/^\^\d/) },
        devDependencies: { "@rein/sdk": expect.any(String), typescript: expect.any(String) },
      });
      expect(JSON.parse(readFileSync(join(dir, ".changeset/config.json"), "utf8")).access).toBe("public");
      expect(existsSync(join(dir, "README.md"))).toBe(true);
      if (kind === "plugin") {
        // The scaffold teaches the safe way: decide on the canonical path facts, never on raw argument text.
        const source = readFileSync(join(dir, "src/index.ts"), "utf8");
        expect(source).toContain("call.facts.paths");
        expect(source).not.toMatch(/JSON\.stringify\(call\.args\)|\.includes\(path\)/);
      }

      linkDependencies(dir);
      const typecheck = tsc(dir);
      expect(typecheck.status, typecheck.stdout + typecheck.stderr).toBe(0);
      const build = tsc(dir, ["-p", "tsconfig.build.json"]);
      expect(build.status, build.stdout + build.stderr).toBe(0);
      expect(existsSync(join(dir, "dist/index.js"))).toBe(true);
      expect(existsSync(join(dir, "dist/index.d.ts"))).toBe(true);
      const test = vitest(dir);
      expect(test.status, test.stdout + test.stderr).toBe(0);
      expect(test.stdout).toMatch(/2 passed/);
    });
  }

  it("refuses a package name npm would refuse", async () => {
    const dir = project({});
    const init = await rein(["init", "--plugin", "--name", "Not Valid"], dir);
    expect(init.code).toBe(2);
    expect(init.stderr).toContain("not a valid npm package name");
  });
});
