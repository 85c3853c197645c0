/**
 * What a fresh clone relies on before anything is built: the `rein` bin is a
 * committed file (so pnpm links it at install, before `dist/` exists) that says
 * so when run unbuilt; the README's two commands are what CI reads and runs; the
 * system-package check names exactly what to install.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
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
    expect(command(1)).toBe("npx --yes pnpm@10.34.9 install && npx --yes pnpm@10.34.9 quickstart");
    expect(command(2)).toBe(
      "npx --yes pnpm@10.34.9 install --frozen-lockfile && npx --yes pnpm@10.34.9 check",
    );
    const ci = readFileSync(join(root, ".ci", "run"), "utf8");
    expect(ci).toContain("scripts/readme-command.sh 1");
    expect(ci).toContain('eval "$test_command"');
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
