/**
 * typebox, the Anthropic SDK, pi-schema, pi-telemetry and commander load from their
 * bundles (src/vendor-bundles.ts, scripts/bundle-vendor.mjs): Node resolves as always
 * and only an entry file of the bundled version is swapped; typebox stays one copy
 * across the CLI, the SDK, the harness and every entry, pi-schema one copy across its
 * two entries; anything else (another version, another file, a package
 * whose name merely starts the same) loads from node_modules.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BundleManifest, bundleRedirect, packageFileOf } from "../src/vendor-bundles.js";

const CLI = join(dirname(fileURLToPath(import.meta.url)), "..");
const SCRIPT = join(CLI, "scripts/bundle-vendor.mjs");
const HOOK = join(CLI, "dist/vendor-bundles.js");

describe("which resolved files are swapped", () => {
  const manifest: BundleManifest = {
    package: "typebox",
    version: "1.4.3",
    files: { "build/index.mjs": "index.mjs", "build/value/index.mjs": "value.mjs" },
  };
  const versionOf = (root: string) => (root.includes("old") ? "0.34.0" : "1.4.3");
  const url = (path: string) => pathToFileURL(path).href;

  it("finds the package root and the file inside, hoisted, in pnpm's store and scoped", () => {
    expect(packageFileOf(url("/p/node_modules/typebox/build/index.mjs"), "typebox")).toEqual({
      root: "/p/node_modules/typebox",
      file: "build/index.mjs",
    });
    expect(
      packageFileOf(
        url("/p/node_modules/.pnpm/typebox@1.4.3/node_modules/typebox/build/value/index.mjs"),
        "typebox",
      ),
    ).toEqual({
      root: "/p/node_modules/.pnpm/typebox@1.4.3/node_modules/typebox",
      file: "build/value/index.mjs",
    });
    expect(packageFileOf(url("/p/node_modules/@anthropic-ai/sdk/index.mjs"), "@anthropic-ai/sdk")?.file).toBe(
      "index.mjs",
    );
    expect(packageFileOf("node:fs", "typebox")).toBeUndefined();
    expect(packageFileOf(url("/p/typebox/build/index.mjs"), "typebox")).toBeUndefined();
    expect(packageFileOf(url("/p/node_modules/typebox-extra/build/index.mjs"), "typebox")).toBeUndefined();
  });

  it("swaps an entry of the bundled version only", () => {
    const bundles = [{ manifest, dir: "/cli/dist/vendor/typebox" }];
    expect(bundleRedirect(bundles, url("/p/node_modules/typebox/build/value/index.mjs"), versionOf)).toBe(
      url("/cli/dist/vendor/typebox/value.mjs"),
    );
    // Another version, a file that is no bundled entry, another package: Node's answer stands.
    expect(
      bundleRedirect(bundles, url("/old/node_modules/typebox/build/index.mjs"), versionOf),
    ).toBeUndefined();
    expect(
      bundleRedirect(bundles, url("/p/node_modules/typebox/build/type/index.mjs"), versionOf),
    ).toBeUndefined();
    expect(bundleRedirect(bundles, url("/p/node_modules/yaml/dist/index.js"), versionOf)).toBeUndefined();
    // A manifest key inherited from Object.prototype is no entry.
    expect(bundleRedirect(bundles, url("/p/node_modules/typebox/constructor"), versionOf)).toBeUndefined();
    // Outside any node_modules (a checkout's own packages, built-ins): never a bundle's file.
    expect(bundleRedirect(bundles, url("/p/typebox/build/value/index.mjs"), versionOf)).toBeUndefined();
    expect(bundleRedirect(bundles, "node:fs", versionOf)).toBeUndefined();
  });
});

describe("a process with the bundles", () => {
  let vendor: string;
  beforeAll(() => {
    vendor = mkdtempSync(join(tmpdir(), "rein-vendor-"));
    execFileSync(process.execPath, [SCRIPT, "--out", vendor], { stdio: "pipe" });
  }, 120_000);
  afterAll(() => rmSync(vendor, { recursive: true, force: true }));

  function probe(body: string, dir = vendor) {
    const script = `
import { registerHooks } from "node:module";
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
const { useVendorBundles } = await import(${JSON.stringify(pathToFileURL(HOOK).href)});
const used = useVendorBundles(${JSON.stringify(dir)});
${body}
`;
    // Run from inside the CLI package, so "typebox" resolves as the CLI's own import does.
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: CLI,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(child.status, child.stderr).toBe(0);
    return JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "") as Record<string, unknown>;
  }

  it("loads every typebox entry from the bundle, one copy shared with @rein/sdk and @rein/harness, and it validates", () => {
    const seen = probe(`
const typebox = await import("typebox");
const { Value } = await import("typebox/value");
const { Compile } = await import("typebox/compile");
const sdk = await import("@rein/sdk");
const harness = await import("@rein/harness");
const schema = typebox.Type.Object({ name: typebox.Type.String(), n: typebox.Type.Optional(typebox.Type.Integer()) });
const fromPackage = loaded.filter((u) => /node_modules\\/(\\.pnpm\\/[^/]+\\/node_modules\\/)?typebox\\//.test(u));
process.stdout.write(JSON.stringify({
  used,
  fromBundle: loaded.filter((u) => u.startsWith(${JSON.stringify(pathToFileURL(vendor).href)} + "/typebox/")).length,
  fromPackage: fromPackage.length,
  sameType: sdk.Type === typebox.Type && harness.Type === typebox.Type,
  valid: Value.Check(schema, { name: "a", n: 2 }),
  invalid: Value.Check(schema, { name: "a", n: 2.5 }),
  compiled: Compile(schema).Check({ name: 1 }),
  errors: [...Value.Errors(schema, { name: 1 })].map((e) => e.instancePath),
}));
`);
    expect(seen).toMatchObject({
      used: [
        "@anthropic-ai/sdk",
        "@earendil-works/pi-schema",
        "@earendil-works/pi-telemetry",
        "commander",
        "typebox",
      ],
      fromPackage: 0,
      sameType: true,
      valid: true,
      invalid: false,
      compiled: false,
      errors: ["/name"],
    });
    expect(seen.fromBundle as number).toBeGreaterThan(0);
    expect(seen.fromBundle as number).toBeLessThan(20);
  });

  it("loads the Anthropic SDK that pi-ai's provider imports from the bundle", () => {
    const seen = probe(`
const piAi = import.meta.resolve("@earendil-works/pi-ai");
const provider = await import(new URL("./api/anthropic-messages.js", piAi).href);
const anthropic = loaded.filter((u) => u.includes("@anthropic-ai/sdk"));
process.stdout.write(JSON.stringify({
  provider: typeof provider.stream,
  fromBundle: anthropic.filter((u) => u.startsWith(${JSON.stringify(pathToFileURL(vendor).href)})).length,
  fromPackage: anthropic.filter((u) => u.includes("node_modules")).length,
}));
`);
    expect(seen).toMatchObject({ provider: "function", fromPackage: 0 });
    expect(seen.fromBundle as number).toBeGreaterThan(0);
  });

  it("loads pi-schema (both entries) and pi-telemetry as pi-ai imports them from their bundles, and pi-ai's tool validation still coerces, checks formats and explains", () => {
    const seen = probe(`
const piAi = await import("@earendil-works/pi-ai");
const tool = {
  name: "mail",
  description: "",
  parameters: {
    type: "object",
    properties: { to: { type: "string", format: "email" }, n: { type: "integer" } },
    required: ["to", "n"],
    additionalProperties: false,
  },
};
const ok = piAi.validateToolArguments(tool, { type: "toolCall", id: "1", name: "mail", arguments: { to: "a@example.com", n: "42" } });
let bad;
try {
  piAi.validateToolArguments(tool, { type: "toolCall", id: "2", name: "mail", arguments: { to: "not an address", n: 1 } });
} catch (error) {
  bad = String(error.message);
}
const of = (name) => loaded.filter((u) => u.includes("/" + name + "/"));
const bundled = (name) => of(name).filter((u) => u.startsWith(${JSON.stringify(pathToFileURL(vendor).href)}));
process.stdout.write(JSON.stringify({
  ok,
  badNamesField: typeof bad === "string" && bad.includes("to"),
  schemaFromPackage: of("@earendil-works/pi-schema").length - bundled("@earendil-works/pi-schema").length,
  schemaFromBundle: bundled("@earendil-works/pi-schema").length,
  telemetryFromPackage: of("@earendil-works/pi-telemetry").length - bundled("@earendil-works/pi-telemetry").length,
  telemetryFromBundle: bundled("@earendil-works/pi-telemetry").length,
}));
`);
    expect(seen).toMatchObject({
      ok: { to: "a@example.com", n: 42 },
      badNamesField: true,
      schemaFromPackage: 0,
      telemetryFromPackage: 0,
    });
    // pi-schema's two entries, no shared chunk between them; pi-telemetry's root entry and its chunk.
    expect(seen.schemaFromBundle).toBe(2);
    expect(seen.telemetryFromBundle as number).toBeGreaterThan(0);
  });

  it("loads commander from its bundle, and it parses", () => {
    const seen = probe(`
const { Command, CommanderError } = await import("commander");
const program = new Command("x").exitOverride().option("-n, --count <n>").argument("<what>");
program.parse(["node", "x", "-n", "3", "thing"]);
let unknownOption;
try {
  new Command("y").exitOverride().configureOutput({ writeErr: () => {} }).parse(["node", "y", "--nope"]);
} catch (error) {
  unknownOption = error instanceof CommanderError ? error.code : "other";
}
const commander = loaded.filter((u) => u.includes("/commander/"));
process.stdout.write(JSON.stringify({
  count: program.opts().count,
  args: program.args,
  unknownOption,
  fromBundle: commander.filter((u) => u.startsWith(${JSON.stringify(pathToFileURL(vendor).href)})).length,
  fromPackage: commander.filter((u) => u.includes("node_modules")).length,
}));
`);
    expect(seen).toEqual({
      count: "3",
      args: ["thing"],
      unknownOption: "commander.unknownOption",
      fromBundle: 1,
      fromPackage: 0,
    });
  });

  it("leaves a package whose manifest names another version to node_modules", () => {
    const other = mkdtempSync(join(tmpdir(), "rein-vendor-other-"));
    try {
      execFileSync("cp", ["-r", join(vendor, "typebox"), other]);
      const file = join(other, "typebox/manifest.json");
      const manifest = JSON.parse(readFileSync(file, "utf8")) as BundleManifest;
      writeFileSync(file, JSON.stringify({ ...manifest, version: "0.0.1" }));
      const seen = probe(
        `
await import("typebox/value");
process.stdout.write(JSON.stringify({
  used,
  fromBundle: loaded.filter((u) => u.startsWith(${JSON.stringify(pathToFileURL(other).href)})).length,
  fromPackage: loaded.filter((u) => /node_modules\\/(\\.pnpm\\/[^/]+\\/node_modules\\/)?typebox\\//.test(u)).length,
}));
`,
        other,
      );
      expect(seen.used).toEqual(["typebox"]);
      expect(seen.fromBundle).toBe(0);
      expect(seen.fromPackage as number).toBeGreaterThan(300);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it("registers nothing without bundles", () => {
    const seen = probe(`process.stdout.write(JSON.stringify({ used }));`, join(vendor, "missing"));
    expect(seen.used).toEqual([]);
  });
});
