/**
 * A config error names the file and the entry where the value was written (issue
 * 30), whatever the layer: user config, project `rein.config.ts`, `.rein/local.json`
 * or the managed file. A plugin option is located in that layer's file, by the
 * entry's index in that file's own `plugins` (not the merged list) and the option's
 * pointer in that file's own options (not the merged rule list); validation errors
 * and errors found after merging (`tools.active`) name the layer that wrote them.
 * Through the built binary.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const GUARD = join(dirname(fileURLToPath(import.meta.url)), "../../plugins/plugin-guard/dist/index.js");

type Layer = "user" | "project" | "local" | "managed";
const LAYERS: Layer[] = ["user", "project", "local", "managed"];

/** What one layer writes: plugin entries and top-level options, as JSON (or TS for the project). */
interface LayerContent {
  plugins?: string[];
  options?: string[];
  /** The project's scripted model; off when a lower layer's model is under test (the project's would win). */
  scriptModel?: false;
}

/** The project's own entries when it is not the layer under test: the merged list then has more entries before. */
const PROJECT_DEFAULT: LayerContent = {
  plugins: [
    '"@rein/plugin-permissions"',
    '["@rein/plugin-policy", { "rules": [{ "rule": "read", "decision": "allow" }] }]',
  ],
};
/** The user layer's entry when it is not under test: one more entry ahead of every other layer's. */
const USER_DEFAULT: LayerContent = { plugins: [JSON.stringify(GUARD)] };

/** Entry 1 of the layer under test: a policy whose second rule has a bad decision. */
const BAD_OPTION: LayerContent = {
  plugins: [
    JSON.stringify(GUARD),
    `["@rein/plugin-policy", { "rules": [
      { "rule": "ls", "decision": "allow" },
      { "rule": "bash", "decision": "maybe" }
    ] }]`,
  ],
};

function render(layer: Layer, content: LayerContent): string {
  const plugins = content.plugins ? [`"plugins": [\n    ${content.plugins.join(",\n    ")}\n  ]`] : [];
  const options = content.options ?? [];
  if (layer === "project") {
    const model =
      content.scriptModel === false || options.some((option) => option.startsWith('"model"'))
        ? []
        : ['model: { script: ["hi"] }'];
    return `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  ${[...model, ...options, ...plugins].join(",\n  ")}
});
`;
  }
  return `{\n  ${[...options, ...plugins].join(",\n  ")}\n}\n`;
}

const setsModel = (content: LayerContent) => (content.options ?? []).some((o) => o.startsWith('"model"'));

/** A project and a machine with every layer present; `tested` gets `content`. */
function setUp(tested: Layer, content: LayerContent) {
  const root = mkdtempSync(join(tmpdir(), "rein-layers-"));
  const files: Record<Layer, string> = {
    user: join(root, "xdg", "rein", "config.json"),
    managed: join(root, "etc", "managed.json"),
    project: "",
    local: "",
  };
  const texts: Record<Layer, string> = {
    user: render("user", tested === "user" ? content : USER_DEFAULT),
    project: render(
      "project",
      tested === "project"
        ? content
        : { ...PROJECT_DEFAULT, ...(setsModel(content) ? { scriptModel: false as const } : {}) },
    ),
    local: render("local", tested === "local" ? content : {}),
    managed: render("managed", tested === "managed" ? content : {}),
  };
  const dir = project({ "rein.config.ts": texts.project, ".rein/local.json": texts.local });
  files.project = join(dir, "rein.config.ts");
  files.local = join(dir, ".rein", "local.json");
  for (const layer of ["user", "managed"] as const) {
    mkdirSync(dirname(files[layer]), { recursive: true });
    writeFileSync(files[layer], texts[layer]);
  }
  const env = { XDG_CONFIG_HOME: join(root, "xdg"), REIN_MANAGED_CONFIG: files.managed, REIN_CONFIG_DIR: "" };
  return { dir, env, file: files[tested], text: texts[tested] };
}

/** 1-based line of the first line containing `needle`. */
const lineOf = (text: string, needle: string) =>
  text.split("\n").findIndex((line) => line.includes(needle)) + 1;

describe.each(LAYERS)("an error written in the %s layer", { timeout: 60_000 }, (layer) => {
  it("a bad plugin option names this layer's file, the line, the entry's index and the option as this file writes them", async () => {
    const { dir, env, file, text } = setUp(layer, BAD_OPTION);
    const result = await rein(["run", "hi"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `rein: ${file}:${lineOf(text, '"maybe"')}: plugins[1]: plugin "policy": option /rules/1/decision expected one of`,
    );
    expect(result.stderr).not.toContain("at ");
  });

  it("a validation error names this layer's file and the option's line", async () => {
    const { dir, env, file, text } = setUp(layer, { options: ['"thinkingLevel": "extreme"'] });
    const result = await rein(["run", "hi"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `rein: ${file}:${lineOf(text, "thinkingLevel")}: thinkingLevel: expected one of off, minimal`,
    );
  });

  it("tools.active naming a tool no plugin registers (found after merging) names the layer that wrote it", async () => {
    const { dir, env, file, text } = setUp(layer, { options: ['"tools": { "active": ["reed"] }'] });
    const result = await rein(["run", "hi"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`rein: ${file}:${lineOf(text, '"active"')}: tools.active:`);
  });

  it("an unknown model id names this layer's file and line, with the closest catalog id", async () => {
    const { dir, env, file, text } = setUp(layer, { options: ['"model": "anthropic/claude-sonet-4-5"'] });
    const result = await rein(["run", "hi"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `rein: ${file}:${lineOf(text, "claude-sonet")}: unknown model "anthropic/claude-sonet-4-5"; did you mean "anthropic/claude-sonnet-4-5"`,
    );
  });

  it("a plugin entry that cannot be found names this layer's file, its index and its own line", async () => {
    const { dir, env, file, text } = setUp(layer, {
      plugins: [JSON.stringify(GUARD), '"./plugins/missing.ts"'],
    });
    const result = await rein(["run", "hi"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `rein: ${file}:${lineOf(text, "missing.ts")}: plugins[1]: cannot find plugin "./plugins/missing.ts"`,
    );
  });

  it("a plugin module that exports no plugin is named with the layer entry that listed it", async () => {
    const plugin = join(mkdtempSync(join(tmpdir(), "rein-plugin-")), "empty.ts");
    writeFileSync(plugin, "export const nothing = 1;\n");
    const { dir, env, file, text } = setUp(layer, {
      plugins: [JSON.stringify(GUARD), JSON.stringify(plugin)],
    });
    const result = await rein(["run", "hi"], dir, { env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`rein: ${plugin}: plugins[1]: "${plugin}" does not export a plugin`);
    expect(result.stderr).toContain(`listed in ${file}:${lineOf(text, "empty.ts")} (plugins[1])`);
  });
});

describe("one plugin named in two layers", { timeout: 60_000 }, () => {
  it("a bad rule the project wrote is reported in the project file at its own rule index, though a higher layer's rules come first in the merged list", async () => {
    const { dir, env } = setUp("local", {
      plugins: [
        '["@rein/plugin-policy", { "rules": [{ "rule": "ls", "decision": "allow" }, { "rule": "cat", "decision": "deny" }] }]',
      ],
    });
    const projectFile = join(dir, "rein.config.ts");
    writeFileSync(
      projectFile,
      render("project", {
        plugins: [
          '"@rein/plugin-permissions"',
          '["@rein/plugin-policy", { "rules": [{ "rule": "read", "decision": "perhaps" }] }]',
        ],
      }),
    );
    const result = await rein(["run", "hi"], dir, { env });
    expect(result.code).toBe(2);
    // Merged, the project's rule is /rules/2 (the local layer's two come first); in its file it is /rules/0.
    expect(result.stderr).toContain(
      `rein: ${projectFile}:6: plugins[1]: plugin "policy": option /rules/0/decision expected one of`,
    );
  });
});
