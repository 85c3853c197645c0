import { existsSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

describe("rein init", { timeout: 60_000 }, () => {
  it("scaffolds a config and a plugin that run as they are, and refuses to overwrite", async () => {
    const dir = project({});
    const init = await rein(["init"], dir);
    expect(init.code).toBe(0);
    for (const file of ["rein.config.ts", "plugins/no-secrets.ts", "plugins/no-secrets.test.ts"]) {
      expect(existsSync(join(dir, file))).toBe(true);
    }
    expect(readFileSync(join(dir, "rein.config.ts"), "utf8")).toContain(
      '["@rein/tools-shell", { sandbox: { mode: "workspace-write"',
    );
    // As `npm install -D @rein/tools-shell` would: the config's shell plugin resolves from the project.
    const shell = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "plugins", "tools-shell");
    mkdirSync(join(dir, "node_modules", "@rein"), { recursive: true });
    symlinkSync(shell, join(dir, "node_modules", "@rein", "tools-shell"), "dir");
    const doctor = await rein(["doctor"], dir);
    expect(doctor.stdout).toMatch(/✓ sandbox +workspace-write: works on this machine/);
    expect(doctor.code).toBe(0);
    const run = await rein(["run", "hello"], dir);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("noted: hello from rein");
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
});
