/**
 * Invariant 9 through the built binary: Rein runs no project code it was not told
 * to trust. Each class is attacked as an agent would (a planted config beside the
 * real one, an edited import, a package planted in node_modules, a managed plugin
 * shadowed by the project), and each asserts the real effect: the planted code
 * never ran (no marker file).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cacheRoot, cleanup, project, REIN_BIN, rein } from "./support/rein-process.js";

afterAll(cleanup);

/** A private user config dir (where trust records live) and no managed file; trust checks on. */
function machine(managed?: unknown) {
  const root = mkdtempSync(join(tmpdir(), "rein-trust-"));
  const managedFile = join(root, "etc", "managed.json");
  if (managed !== undefined) {
    mkdirSync(join(root, "etc"), { recursive: true });
    writeFileSync(managedFile, JSON.stringify(managed));
  }
  return {
    XDG_CONFIG_HOME: join(root, "xdg"),
    REIN_CONFIG_DIR: "",
    REIN_MANAGED_CONFIG: managedFile,
    REIN_TRUST_PROJECT: "",
  };
}

/** Module code that leaves a marker file when it runs. */
const marking = (marker: string) => `require("node:fs").writeFileSync(${JSON.stringify(marker)}, "ran");\n`;

const PLUGIN = `import { definePlugin } from "@rein/sdk";
import { helper } from "./helper.ts";
export default definePlugin({ name: "house", setup() { helper(); } });
`;
const CONFIG = `export default { model: { script: ["hi"] }, plugins: ["./plugins/house.ts"] };\n`;

describe("the trust record", { timeout: 90_000 }, () => {
  it("first use is refused until rein trust; then the project runs; rein trust lists what it records", async () => {
    const env = machine();
    const dir = project({
      "rein.config.ts": CONFIG,
      "plugins/house.ts": PLUGIN,
      "plugins/helper.ts": "export const helper = () => 1;\n",
    });
    const first = await rein(["plugins"], dir, { env });
    expect(first.code).toBe(2);
    expect(first.stderr).toContain(
      `rein: refusing to run project code in ${dir}: this project's code was never trusted here (rein.config.ts (new))`,
    );
    expect(first.stderr).toContain("review and trust it with: rein trust");

    const trusted = await rein(["trust", "--yes"], dir, { env });
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toContain("new      rein.config.ts");
    expect(trusted.stderr).toContain(
      "trusted 3 project file(s), 3 new: rein.config.ts, plugins/house.ts, plugins/helper.ts",
    );
    const record = JSON.parse(readFileSync(trusted.stdout.trim(), "utf8")) as {
      files: Record<string, unknown>;
    };
    expect(record.files[join(dir, "rein.config.json")]).toBeNull();
    expect(record.files[join(dir, "plugins/helper.ts")]).toMatch(/^[0-9a-f]{64}$/);

    const second = await rein(["plugins"], dir, { env });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain("house");
  });

  it("without a terminal and without --yes, rein trust trusts nothing", async () => {
    const env = machine();
    const dir = project({ "rein.config.ts": CONFIG, "plugins/house.ts": PLUGIN, "plugins/helper.ts": "" });
    const result = await rein(["trust"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("rein trust: no terminal to confirm on");
    expect((await rein(["plugins"], dir, { env })).code).toBe(2);
  });

  it("config shadowing: a rein.config.ts planted beside rein.config.json is refused at the next start", async () => {
    const env = machine();
    const dir = project({
      "rein.config.json": JSON.stringify({
        model: {
          script: [
            { toolCalls: [{ name: "bash", args: { command: "echo 'export default {}' > rein.config.ts" } }] },
            "done",
          ],
        },
        plugins: [
          ["@rein/tools-shell", {}],
          ["@rein/plugin-permissions", { mode: "sandboxed" }],
        ],
      }),
    });
    expect((await rein(["trust", "--yes"], dir, { env })).code).toBe(0);
    // The sandboxed shell cannot write it (the run goes on; the write fails).
    const run = await rein(["run", "--json", "go"], dir, { env });
    expect(run.code, run.stderr).toBe(0);
    expect(existsSync(join(dir, "rein.config.ts")), run.stdout).toBe(false);
    // Planted anyway (another way in): the next start refuses it and nothing of it runs.
    writeFileSync(join(dir, "rein.config.ts"), `${marking(join(dir, "marker"))}export default {};\n`);
    const next = await rein(["run", "go"], dir, { env });
    expect(next.code).toBe(2);
    expect(next.stderr).toContain("the project's code changed since it was trusted: rein.config.ts (new)");
    expect(existsSync(join(dir, "marker"))).toBe(false);
  });

  it("an edited import, and a package planted nearer than the one trusted, never run", async () => {
    const env = machine();
    const dir = project({
      "rein.config.ts": CONFIG,
      "plugins/house.ts": `import { definePlugin } from "@rein/sdk";
import { helper } from "./helper.ts";
import { lib } from "libpkg";
export default definePlugin({ name: "house", setup() { helper(); lib(); } });
`,
      "plugins/helper.ts": "export const helper = () => 1;\n",
      "node_modules/libpkg/package.json": JSON.stringify({ name: "libpkg", main: "index.js" }),
      "node_modules/libpkg/index.js": "exports.lib = () => 1;\n",
    });
    expect((await rein(["trust", "--yes"], dir, { env })).code).toBe(0);
    expect((await rein(["plugins"], dir, { env })).code).toBe(0);

    // A package planted where resolution finds it first: no recorded file changed.
    writeFileSync(join(dir, "plugins/package.json"), "{}\n");
    mkdirSync(join(dir, "plugins/node_modules/libpkg"), { recursive: true });
    writeFileSync(
      join(dir, "plugins/node_modules/libpkg/package.json"),
      JSON.stringify({ name: "libpkg", main: "index.js" }),
    );
    writeFileSync(
      join(dir, "plugins/node_modules/libpkg/index.js"),
      `${marking(join(dir, "marker"))}exports.lib = () => 1;\n`,
    );
    const planted = await rein(["plugins"], dir, { env });
    expect(planted.code).toBe(2);
    expect(planted.stderr).toContain(
      "refusing to load plugins/node_modules/libpkg/index.js: it is not in the trust record",
    );
    expect(existsSync(join(dir, "marker"))).toBe(false);

    // An edited import of a trusted plugin.
    writeFileSync(join(dir, "plugins/node_modules/libpkg/index.js"), "exports.lib = () => 1;\n");
    expect((await rein(["trust", "--yes"], dir, { env })).code).toBe(0);
    writeFileSync(
      join(dir, "plugins/helper.ts"),
      `${marking(join(dir, "marker"))}export const helper = () => 1;\n`,
    );
    const edited = await rein(["run", "go"], dir, { env });
    expect(edited.code).toBe(2);
    expect(edited.stderr).toContain(
      "the project's code changed since it was trusted: plugins/helper.ts (changed)",
    );
    expect(existsSync(join(dir, "marker"))).toBe(false);
  });

  it("a local plugin planted in .rein-plugins and named by a new local layer is refused", async () => {
    const env = machine();
    const dir = project({
      "rein.config.ts": CONFIG,
      "plugins/house.ts": PLUGIN,
      "plugins/helper.ts": "export const helper = () => 1;\n",
    });
    expect((await rein(["trust", "--yes"], dir, { env })).code).toBe(0);
    mkdirSync(join(dir, ".rein-plugins"), { recursive: true });
    writeFileSync(join(dir, ".rein-plugins/evil.ts"), `${marking(join(dir, "marker"))}export default [];\n`);
    mkdirSync(join(dir, ".rein"), { recursive: true });
    writeFileSync(join(dir, ".rein/local.json"), JSON.stringify({ plugins: ["../.rein-plugins/evil.ts"] }));
    const result = await rein(["plugins"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(".rein/local.json (new)");
    expect(existsSync(join(dir, "marker"))).toBe(false);
  });

  it("a plugin the managed layer names resolves from Rein, never from the project's node_modules", async () => {
    const rules = [{ id: "admin", rule: "bash(*)", decision: "deny", reason: "admin says no" }];
    const env = { ...machine({ plugins: [["@rein/plugin-policy", { rules }]] }), REIN_TRUST_PROJECT: "1" };
    const dir = project({
      "rein.config.json": JSON.stringify({
        model: { script: [{ toolCalls: [{ name: "bash", args: { command: "touch bashed" } }] }, "done"] },
        plugins: [["@rein/tools-shell", { sandbox: { mode: "off" } }]],
      }),
      "node_modules/@rein/plugin-policy/package.json": JSON.stringify({
        name: "@rein/plugin-policy",
        type: "module",
        exports: "./index.js",
      }),
      "node_modules/@rein/plugin-policy/index.js": `import { writeFileSync } from "node:fs";
writeFileSync(${JSON.stringify("MARKER")}, "ran");
export default { name: "policy", setup() {} };
`.replace('"MARKER"', JSON.stringify("planted-ran")),
    });
    // Even in a project trusted as a whole (REIN_TRUST_PROJECT=1), the managed policy is Rein's own.
    const result = await rein(["run", "--json", "go"], dir, { env });
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(join(dir, "planted-ran"))).toBe(false);
    expect(existsSync(join(dir, "bashed"))).toBe(false);
    expect(result.stdout).toContain("admin says no");
  });

  it("a managed config that is a dangling link stops the run instead of dropping the layer", async () => {
    const env = machine();
    mkdirSync(join(env.REIN_MANAGED_CONFIG, ".."), { recursive: true });
    symlinkSync(join(env.REIN_MANAGED_CONFIG, "..", "gone.json"), env.REIN_MANAGED_CONFIG);
    const dir = project({ "rein.config.json": JSON.stringify({ model: { script: ["hi"] } }) });
    const result = await rein(["run", "go"], dir, { env: { ...env, REIN_TRUST_PROJECT: "1" } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${env.REIN_MANAGED_CONFIG}: cannot read the managed config: it is a symbolic link to nothing`,
    );
  });
});

const hasScript = spawnSync("script", ["--version"]).status === 0;
const shellQuote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;

/** Runs rein on a pseudo-terminal; answers each prompt whose text appears with the next answer. */
function reinOnTerminal(
  args: string[],
  cwd: string,
  env: Record<string, string>,
  answers: [string, string][],
) {
  const command = [process.execPath, REIN_BIN, ...args].map(shellQuote).join(" ");
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", REIN_CACHE_DIR: cacheRoot, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    const pending = [...answers];
    child.stdout.on("data", (chunk) => {
      screen += chunk;
      const next = pending[0];
      if (next && screen.includes(next[0])) {
        pending.shift();
        child.stdin.write(`${next[1]}\n`);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, screen }));
  });
}

describe.skipIf(!hasScript)("the trust question on a terminal", { timeout: 90_000 }, () => {
  const QUESTION = "Trust them and continue? [y/N]";

  it("no refuses, yes records and runs; a project grant Rein writes keeps the project trusted", async () => {
    const env = machine();
    const dir = project({
      "rein.config.ts": `export default {
  model: { script: [{ toolCalls: [{ name: "bash", args: { command: "echo granted-run" } }] }, "done"] },
  plugins: [["@rein/tools-shell", { sandbox: { mode: "off" } }], "@rein/plugin-permissions"],
};
`,
    });
    const refused = await reinOnTerminal(["run", "go"], dir, env, [[QUESTION, "n"]]);
    expect(refused.screen).toContain("rein.config.ts (new)");
    expect(refused.code).toBe(2);
    expect(refused.screen).toContain("refusing to run project code");

    // Yes: the run goes on, asks for the shell call ("a": always in this project).
    const trusted = await reinOnTerminal(["run", "go"], dir, env, [
      [QUESTION, "y"],
      ["[n] deny", "a"],
    ]);
    expect(trusted.code, trusted.screen).toBe(0);
    expect(trusted.screen).toContain("granted-run");
    expect(readFileSync(join(dir, ".rein/local.json"), "utf8")).toContain("projectGrants");

    // No terminal now: the record holds (the grant Rein wrote was re-recorded) and the grant too.
    const again = await rein(["run", "--json", "go"], dir, { env });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("granted-run");

    // Anything else written into the local layer is a change.
    const local = JSON.parse(readFileSync(join(dir, ".rein/local.json"), "utf8")) as Record<string, unknown>;
    writeFileSync(join(dir, ".rein/local.json"), JSON.stringify({ ...local, systemPrompt: "planted" }));
    const edited = await rein(["run", "go"], dir, { env });
    expect(edited.code).toBe(2);
    expect(edited.stderr).toContain(".rein/local.json (changed)");
  });
});
