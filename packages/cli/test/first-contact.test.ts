/**
 * What a fresh clone relies on before anything is built: the `rein` bin is a
 * committed file (so pnpm links it at install, before `dist/` exists) that says
 * so when run unbuilt; the README's two commands are what CI reads and runs; the
 * system-package check names exactly what to install.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project } from "./support/rein-process.js";

afterAll(cleanup);

const cliDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const root = join(cliDir, "..", "..");

describe("a fresh clone", () => {
  it("the rein bin is a committed file outside dist/ that says when the CLI is not built", () => {
    const pkg = JSON.parse(readFileSync(join(cliDir, "package.json"), "utf8")) as {
      bin: { rein: string };
      files: string[];
    };
    expect(pkg.bin.rein).toBe("./bin/rein.js");
    expect(pkg.files).toContain("bin");
    const tracked = execFileSync("git", ["ls-files", "--error-unmatch", "bin/rein.js"], {
      cwd: cliDir,
      encoding: "utf8",
    });
    expect(tracked.trim()).toBe("bin/rein.js");

    const unbuilt = project({});
    mkdirSync(join(unbuilt, "bin"));
    copyFileSync(join(cliDir, "bin", "rein.js"), join(unbuilt, "bin", "rein.js"));
    expect(existsSync(join(unbuilt, "dist"))).toBe(false);
    const result = spawnSync(process.execPath, [join(unbuilt, "bin", "rein.js"), "--version"], {
      encoding: "utf8",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("not built yet");
    expect(result.stderr).not.toMatch(/^\s+at /m);
  });

  it("CI reads the README's two Quick start commands: the main job, then the tests", () => {
    const command = (n: number) =>
      execFileSync("bash", [join(root, "scripts", "readme-command.sh"), String(n)], {
        encoding: "utf8",
      }).trim();
    const pnpm = "sh scripts/with-node.sh npx --yes pnpm@10.34.9";
    expect(command(1)).toBe(`${pnpm} install && ${pnpm} quickstart`);
    expect(command(2)).toBe(`${pnpm} install --frozen-lockfile && ${pnpm} check`);
    const ci = readFileSync(join(root, ".ci", "run"), "utf8");
    expect(ci).toContain("scripts/readme-command.sh 1");
    expect(ci).toContain('eval "$test_command"');
  });

  it("with-node.sh runs the command on the machine's Node from 22.19 on, and under Node 24 from npm before", () => {
    const script = join(root, "scripts", "with-node.sh");
    const run = (nodeVersion: string) => {
      const bin = mkdtempSync(join(tmpdir(), "rein-with-node-"));
      // A `node` that reports the given version, and an `npx` that says how it was called.
      writeFileSync(
        join(bin, "node"),
        `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} -e 'const process = { versions: { node: "${nodeVersion}" }, exit: (code) => globalThis.process.exit(code) }; eval(globalThis.process.argv[1])' "$2"\n`,
        { mode: 0o755 },
      );
      writeFileSync(join(bin, "npx"), '#!/bin/sh\necho "npx $*"\n', { mode: 0o755 });
      return execFileSync("/bin/sh", [script, "echo", "direct"], {
        encoding: "utf8",
        env: { PATH: `${bin}:/usr/bin:/bin` },
      }).trim();
    };
    expect(run("22.19.0")).toBe("direct");
    expect(run("24.1.0")).toBe("direct");
    expect(run("26.0.0")).toBe("direct");
    const fallback = "npx --yes -p node@24 -- env -u npm_config_package -u npm_config_yes echo direct";
    expect(run("22.18.9")).toBe(fallback);
    expect(run("20.20.2")).toBe(fallback);
  });

  it("every package's test script runs that package's tests from the repository root", () => {
    const dirs = ["packages", join("packages", "plugins")].flatMap((parent) =>
      readdirSync(join(root, parent), { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(join(root, parent, entry.name, "test")))
        .map((entry) => join(parent, entry.name)),
    );
    expect(dirs.length).toBeGreaterThan(10);
    for (const dir of dirs) {
      const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
      const script: string | undefined = manifest.scripts?.test;
      const match = /^vitest run --root (\S+) (\S+)$/.exec(script ?? "");
      expect(match, `${dir}: scripts.test`).not.toBeNull();
      expect(resolve(root, dir, match?.[1] ?? ""), dir).toBe(root);
      expect(match?.[2], dir).toBe(dir.split(sep).join("/"));
    }
  });

  it("pnpm --filter <package> test runs and counts that package's tests", () => {
    const result = spawnSync("npx", ["--yes", "pnpm@10.34.9", "--filter", "@rein/plugin-redact", "test"], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
    });
    expect(result.status, result.stderr).toBe(0);
    const passed = /Tests\s+(\d+) passed/.exec(result.stdout);
    expect(Number(passed?.[1])).toBeGreaterThan(0);
    expect(result.stdout).toContain("packages/plugins/plugin-redact/test/");
    expect(result.stdout).not.toContain("packages/harness/test/");
  });

  it("the system-package check names every missing Debian package and fails", () => {
    const result = spawnSync("/bin/bash", [join(root, "scripts", "system-packages.sh"), "--check"], {
      encoding: "utf8",
      env: { PATH: join(root, "no-such-dir") },
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("apt-get install -y chromium bubblewrap socat ripgrep");
  });
});
