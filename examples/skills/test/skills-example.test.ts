/**
 * The skills example through the built `rein`: the model loads the skill, reads
 * its reference through the file tools, is refused the write its allowed-tools
 * exclude, and answers; `rein skills validate` passes on the example's skill.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const reinBin = join(
  dirname(createRequire(import.meta.url).resolve("@rein/cli/package.json")),
  "dist",
  "bin.js",
);

const env: NodeJS.ProcessEnv = {
  ...process.env,
  NO_COLOR: "1",
  REIN_TRUST_PROJECT: "1",
  REIN_CACHE_DIR: mkdtempSync(join(tmpdir(), "rein-cache-")),
  XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), "rein-config-")),
};
const rein = (...args: string[]) =>
  spawnSync(process.execPath, [reinBin, ...args], { cwd: root, env, encoding: "utf8" });

describe("the skills example", { timeout: 60_000 }, () => {
  it("loads the skill, reads its reference, is refused the write, answers", () => {
    // Sessions go to the example's .rein/sessions (git-ignored), as with `pnpm start`.
    const result = rein("run", "Write the changelog entry for CHANGES.txt");
    expect(result.stderr).not.toContain("rein:");
    expect(result.status).toBe(0);
    expect(result.stderr).toMatch(/→ skill \{"name":"changelog-entry"\}/);
    expect(result.stderr).toMatch(
      /→ read \{"path":".agents\/skills\/changelog-entry\/references\/format.md"\}/,
    );
    expect(result.stderr).toMatch(/→ write \{"path":"CHANGELOG.md".*\n\s+✗ denied by harness: unknown tool/);
    expect(result.stdout).toContain("## 1.4.0");
  });

  it("its skill passes rein skills validate", () => {
    const result = rein("skills", "validate");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(join(root, ".agents/skills/changelog-entry/SKILL.md"));
  });
});
