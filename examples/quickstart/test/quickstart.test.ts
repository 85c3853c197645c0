import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const reinBin = join(
  dirname(createRequire(import.meta.url).resolve("@rein/cli/package.json")),
  "dist",
  "bin.js",
);

describe("the quick start", { timeout: 60_000 }, () => {
  it("lists and reads files, is denied the write with the reason shown, and answers", () => {
    // As `pnpm start` does: trust the project (in a throwaway config dir), then run.
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NO_COLOR: "1",
      REIN_CACHE_DIR: mkdtempSync(join(tmpdir(), "rein-cache-")),
      REIN_CONFIG_DIR: mkdtempSync(join(tmpdir(), "rein-config-")),
    };
    delete env.REIN_TRUST_PROJECT;
    const untrusted = spawnSync(process.execPath, [reinBin, "run", "What is in this folder?"], {
      cwd: join(here, ".."),
      env,
      encoding: "utf8",
    });
    expect(untrusted.status).toBe(2);
    expect(untrusted.stderr).toContain("rein trust");
    const trusted = spawnSync(process.execPath, [reinBin, "trust", "--yes"], {
      cwd: join(here, ".."),
      env,
      encoding: "utf8",
    });
    expect(trusted.status).toBe(0);
    const result = spawnSync(process.execPath, [reinBin, "run", "What is in this folder?"], {
      cwd: join(here, ".."),
      env,
      encoding: "utf8",
    });
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/→ ls/);
    expect(result.stderr).toMatch(/→ read \{"path":"README.md"\}/);
    expect(result.stderr).toContain("denied by policy:protected-files: README.md is protected");
    expect(result.stdout).toContain("the policy did not let me change README.md");
  });
});
