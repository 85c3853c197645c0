/**
 * The publishing flow, end to end: pack @rein/harness, @rein/sdk, @rein/cli and a
 * tool pack with `pnpm pack` (workspace versions rewritten as published), install
 * the tarballs with npm into a fresh project outside the workspace, and run
 * `rein tools` and a scripted `rein run` there. Our packages come only from the
 * tarballs; third-party dependencies come from npm's cache or the npm registry.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project } from "./support/rein-process.js";

afterAll(cleanup);

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const PACKED = ["packages/harness", "packages/sdk", "packages/cli", "examples/tool-pack"];

describe("published packages install and run outside the workspace", { timeout: 600_000 }, () => {
  it("packs, installs with npm, lists the tool pack's tools and runs a scripted agent", () => {
    const tarballs = mkdtempSync(join(tmpdir(), "rein-pack-"));
    for (const dir of PACKED) {
      execFileSync("npx", ["--yes", "pnpm@10.34.9", "pack", "--pack-destination", tarballs], {
        cwd: join(root, dir),
        stdio: "pipe",
      });
    }
    const files = readdirSync(tarballs).filter((f) => f.endsWith(".tgz"));
    expect(files).toHaveLength(4);

    const app = project({
      "package.json": JSON.stringify({ name: "fresh-app", private: true, type: "module" }),
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  model: { script: [{ toolCalls: [{ name: "days_between", args: { from: "2026-01-01", to: "2026-12-25" } }] }, "358 days to go."] },
  plugins: ["@rein-examples/tools-time"],
});
`,
    });
    const install = spawnSync(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--loglevel=error",
        ...files.map((f) => join(tarballs, f)),
      ],
      { cwd: app, encoding: "utf8" },
    );
    expect(install.status, install.stderr).toBe(0);

    const bin = join(app, "node_modules", ".bin", "rein");
    const env = { ...process.env, NO_COLOR: "1", REIN_CACHE_DIR: join(app, ".cache") };
    const tools = spawnSync(bin, ["tools"], { cwd: app, encoding: "utf8", env });
    expect(tools.status, tools.stderr).toBe(0);
    expect(tools.stdout).toContain("now");
    expect(tools.stdout).toContain("days_between");

    const run = spawnSync(bin, ["run", "How long until Christmas?"], { cwd: app, encoding: "utf8", env });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toContain("✓ 358");
    expect(run.stdout).toContain("358 days to go.");
  });
});
