/**
 * The trust record's parts in process: what counts as a change, how a record that
 * Rein did not write is refused, and the module gate (the e2e file covers the
 * built binary).
 */
import { mkdirSync, mkdtempSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changesSince, describeChanges, entryFiles, startTrust } from "../src/trust/project-trust.js";
import { readTrust, sha256, trustFile, writeTrust } from "../src/trust/trust-store.js";

const temp = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

function place() {
  const project = temp("rein-trust-unit-");
  const env = { REIN_CONFIG_DIR: temp("rein-trust-cfg-") };
  writeFileSync(join(project, "rein.config.json"), "{}\n");
  return { project, env, local: join(project, ".rein", "local.json") };
}

describe("changes against the record", () => {
  it("a config name recorded absent and now present is new; edits and removals are named", () => {
    const { project, env, local } = place();
    writeFileSync(join(project, "plugin.ts"), "export default 1;\n");
    const entries = entryFiles(project, local, env);
    const files: Record<string, string | null> = {};
    for (const file of entries) files[file] = null;
    files[join(project, "rein.config.json")] = sha256("{}\n");
    files[join(project, "plugin.ts")] = sha256("export default 1;\n");
    files[join(project, "gone.ts")] = sha256("x");
    const record = { version: 1 as const, project, trustedAt: "then", files };
    expect(changesSince(record, entries)).toEqual([{ file: join(project, "gone.ts"), kind: "removed" }]);

    writeFileSync(join(project, "rein.config.ts"), "export default {};\n");
    writeFileSync(join(project, "plugin.ts"), "export default 2;\n");
    const changes = changesSince(record, entries);
    expect(changes).toEqual([
      { file: join(project, "rein.config.ts"), kind: "new" },
      { file: join(project, "plugin.ts"), kind: "changed" },
      { file: join(project, "gone.ts"), kind: "removed" },
    ]);
    expect(describeChanges(changes, project)).toBe(
      "rein.config.ts (new), plugin.ts (changed), gone.ts (removed)",
    );
  });

  it("without a record every present entry is new", () => {
    const { project, env, local } = place();
    expect(changesSince(undefined, entryFiles(project, local, env))).toEqual([
      { file: join(project, "rein.config.json"), kind: "new" },
    ]);
  });
});

describe("the record file", () => {
  it("is written 0600 in the config dir and read back; one Rein did not write is an error", () => {
    const { project, env } = place();
    const file = writeTrust(
      { version: 1, project, trustedAt: "now", files: { [join(project, "a")]: null } },
      env,
    );
    expect(file).toBe(trustFile(project, env));
    expect(file.startsWith(env.REIN_CONFIG_DIR)).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readTrust(project, env)?.files).toEqual({ [join(project, "a")]: null });

    writeFileSync(file, "{ not json");
    expect(() => readTrust(project, env)).toThrow(expect.objectContaining({ code: "trust" }));
    writeFileSync(file, JSON.stringify({ version: 1, project: "/elsewhere", trustedAt: "x", files: {} }));
    expect(() => readTrust(project, env)).toThrow(
      expect.objectContaining({ code: "trust", message: expect.stringContaining("not one Rein wrote for") }),
    );
  });
});

describe("startTrust", () => {
  it("refuses a project never trusted, and one whose files changed, naming them", async () => {
    const { project, env, local } = place();
    const options = { project, localFile: local, managedFile: join(project, "none", "m.json"), env };
    await expect(startTrust(options)).rejects.toMatchObject({
      code: "trust",
      message: expect.stringContaining("never trusted here (rein.config.json (new))"),
    });
    const recording = await startTrust({ ...options, record: true });
    expect(recording.mode).toBe("record");
    recording.save();
    recording.close();
    const verified = await startTrust(options);
    expect(verified.mode).toBe("verify");
    verified.close();
    mkdirSync(join(project, ".rein"));
    writeFileSync(local, "{}");
    await expect(startTrust(options)).rejects.toMatchObject({
      code: "trust",
      message: expect.stringContaining(".rein/local.json (new)"),
    });
  });

  it("a yes at the question records; REIN_TRUST_PROJECT=1 checks nothing", async () => {
    const { project, env, local } = place();
    const options = { project, localFile: local, managedFile: join(project, "none", "m.json"), env };
    const asked: string[] = [];
    const trust = await startTrust({
      ...options,
      ask: async (changes) => {
        asked.push(describeChanges(changes, project));
        return true;
      },
    });
    expect(asked).toEqual(["rein.config.json (new)"]);
    expect(trust.mode).toBe("record");
    trust.close();
    const off = await startTrust({ ...options, env: { ...env, REIN_TRUST_PROJECT: "1" } });
    expect(off.mode).toBe("off");
    expect(readTrust(project, env)).toBeUndefined();
  });

  it("the gate admits recorded bytes only", async () => {
    const { project, env, local } = place();
    const plugin = join(project, "plugin.ts");
    writeFileSync(plugin, "export default 1;\n");
    const options = { project, localFile: local, managedFile: join(project, "none", "m.json"), env };
    const { admitModule } = await import("../src/trust/module-gate.js");
    const recording = await startTrust({ ...options, record: true });
    admitModule(plugin, "export default 1;\n");
    recording.save();
    recording.close();
    const verified = await startTrust(options);
    try {
      expect(() => admitModule(plugin, "export default 1;\n")).not.toThrow();
      expect(() => admitModule(plugin, "export default 2;\n")).toThrow(
        expect.objectContaining({
          code: "trust",
          message: expect.stringContaining("refusing to load plugin.ts: it is changed since"),
        }),
      );
      expect(() => admitModule(join(project, "other.ts"), "x")).toThrow(
        expect.objectContaining({
          message: expect.stringContaining("refusing to load other.ts: it is not in"),
        }),
      );
    } finally {
      verified.close();
    }
    // Closed: nothing is checked.
    expect(() => admitModule(join(project, "other.ts"), "x")).not.toThrow();
  });
});

describe("Rein's own write to the local layer", () => {
  const grant = (n: number) => ({ tool: "bash", mac: `m${n}` });
  const layer = (grants: unknown[], extra: Record<string, unknown> = {}) =>
    JSON.stringify({ ...extra, plugins: [["@rein/plugin-permissions", { projectGrants: grants }]] });

  it("is re-recorded only when project grants were appended and nothing else changed", async () => {
    const { onlyGrantsAdded } = await import("../src/trust/project-trust.js");
    expect(onlyGrantsAdded(undefined, layer([grant(1)]))).toBe(true);
    expect(onlyGrantsAdded(layer([grant(1)]), layer([grant(1), grant(2)]))).toBe(true);
    expect(onlyGrantsAdded(layer([grant(1)]), layer([grant(1)]))).toBe(false);
    expect(onlyGrantsAdded(layer([grant(1)]), layer([grant(2), grant(3)]))).toBe(false);
    expect(onlyGrantsAdded(layer([]), layer([grant(1)], { model: "other" }))).toBe(false);
    expect(
      onlyGrantsAdded(
        layer([]),
        JSON.stringify({
          plugins: [["@rein/plugin-permissions", { projectGrants: [grant(1)], mode: "sandboxed" }]],
        }),
      ),
    ).toBe(false);
    expect(onlyGrantsAdded(layer([]), "{ not json")).toBe(false);
  });
});

describe("Rein's own installation", () => {
  it("is the workspace of this checkout, and the CLI's dependency closure holds its packages", async () => {
    const { installRoot, reinPackages } = await import("../src/trust/install-root.js");
    const workspace = realpathSync(join(import.meta.dirname, "..", "..", ".."));
    expect(installRoot()).toBe(workspace);
    const packages = reinPackages();
    for (const name of ["sdk", "harness", "plugins/plugin-policy", "plugins/tools-shell"]) {
      expect(packages).toContain(join(workspace, "packages", name));
    }
    expect(packages.some((dir) => dir.includes(`${join("node_modules", "jiti")}`))).toBe(true);
    // Not a dependency of the CLI: a project installing it has it checked.
    expect(packages).not.toContain(join(workspace, "packages", "plugins", "tools-fs"));
  });
});
