/**
 * The fields behind "errors name the file and entry where the value was written"
 * (issue 30; the messages are pinned end to end in layer-errors.e2e.test.ts): a
 * plugin load failure carries `{ code, file, line, layer, index }` of the layer
 * entry at fault, the index counted in that file's own `plugins`; a value found
 * bad after merging is placed in the layer that wrote it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
import { createScriptedModel, loadPlugins } from "@rein/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { layerAtPointer, pluginLoadError } from "../src/config/entry-location.js";
import { loadConfig } from "../src/config/load-config.js";
import { resolvePlugins } from "../src/config/resolve-plugins.js";
import { whereWritten } from "../src/config/value-origin.js";

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A project with a JSON config and the other layers as JSON files; returns what loadConfig needs. */
function layers(files: { user?: unknown; project: unknown; local?: unknown; managed?: unknown }) {
  const root = mkdtempSync(join(tmpdir(), "rein-layer-fields-"));
  roots.push(root);
  const paths = {
    user: join(root, "xdg", "rein", "config.json"),
    project: join(root, "project", "rein.config.json"),
    local: join(root, "project", ".rein", "local.json"),
    managed: join(root, "managed.json"),
  };
  for (const [layer, value] of Object.entries(files)) {
    if (value === undefined) continue;
    const file = paths[layer as keyof typeof paths];
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  }
  // Trusted: this file pins where errors point, not the trust record (trust.e2e does).
  const env = {
    XDG_CONFIG_HOME: join(root, "xdg"),
    REIN_MANAGED_CONFIG: paths.managed,
    REIN_TRUST_PROJECT: "1",
  };
  return { cwd: join(root, "project"), env, paths };
}

async function loadFailure(setup: ReturnType<typeof layers>) {
  const loaded = await loadConfig({ cwd: setup.cwd, env: setup.env });
  const plugins = await resolvePlugins(loaded);
  const scripted = createScriptedModel([]);
  const harness = new AgentHarness({ session: Session.create(new MemoryStorage()), model: scripted.model });
  try {
    await loadPlugins(
      harness,
      plugins.map((p) => p.entry),
    );
  } catch (error) {
    return pluginLoadError(loaded, plugins, error);
  } finally {
    await harness.close();
    scripted.dispose();
  }
  throw new Error("expected the plugins to fail loading");
}

const policy = (rules: unknown[]) => ["@rein/plugin-policy", { rules }];

describe("a plugin option error carries the layer entry that wrote it", () => {
  it.each(["user", "local", "managed"] as const)(
    "written in the %s layer: that file, that layer, the entry's index in that file",
    async (layer) => {
      const setup = layers({
        project: { plugins: ["@rein/plugin-permissions", policy([{ rule: "read", decision: "allow" }])] },
        [layer]: {
          plugins: [
            policy([
              { rule: "ls", decision: "allow" },
              { rule: "bash", decision: "maybe" },
            ]),
          ],
        },
      });
      expect(await loadFailure(setup)).toMatchObject({
        code: "plugin",
        layer,
        file: setup.paths[layer],
        index: 0,
        plugin: "policy",
      });
    },
  );

  it("written in the project while a higher layer names the same plugin: the project's file and index", async () => {
    const setup = layers({
      user: { plugins: ["@rein/plugin-permissions"] },
      project: { plugins: ["@rein/plugin-permissions", policy([{ rule: "read", decision: "nope" }])] },
      local: { plugins: [policy([{ rule: "ls", decision: "allow" }])] },
    });
    const error = await loadFailure(setup);
    expect(error).toMatchObject({ code: "plugin", layer: "project", file: setup.paths.project, index: 1 });
    const text = readFileSync(setup.paths.project, "utf8");
    expect(error.line).toBe(text.split("\n").findIndex((line) => line.includes('"nope"')) + 1);
  });
});

describe("layerAtPointer: merged options back to the file that wrote them", () => {
  // Merged rules put the higher layer's first: local's two, then the project's one.
  const origins = { rules: [{ rule: "local", decision: "local" }, "local", "project"], mode: "managed" };

  it.each([
    ["/rules/0/decision", { layer: "local", pointer: "/rules/0/decision" }],
    ["/rules/1", { layer: "local", pointer: "/rules/1" }],
    ["/rules/2/decision", { layer: "project", pointer: "/rules/0/decision" }],
    ["/mode", { layer: "managed", pointer: "/mode" }],
    ["/rules/0/missing", { layer: "local", pointer: "/rules/0/missing" }],
  ])("%s", (pointer, expected) => {
    expect(layerAtPointer(origins as never, pointer)).toEqual(expected);
  });

  it("a part several layers wrote has no single layer", () => {
    expect(layerAtPointer(origins as never, "/rules")).toBeUndefined();
  });
});

describe("whereWritten: a merged value's layer file and line", () => {
  it("names the layer that set the value, not the project file", async () => {
    const setup = layers({
      project: { model: { script: ["hi"] } },
      local: { tools: { active: ["reed"] } },
    });
    const loaded = await loadConfig({ cwd: setup.cwd, env: setup.env });
    expect(whereWritten(loaded, "tools.active")).toEqual({
      layer: "local",
      file: setup.paths.local,
      line: 3,
    });
  });

  it("a value two layers set is placed where the winning layer wrote it", async () => {
    const setup = layers({
      project: { model: { script: ["hi"] }, mcpServe: { hideDenied: true } },
      managed: { mcpServe: { hideDenied: false } },
    });
    const loaded = await loadConfig({ cwd: setup.cwd, env: setup.env });
    expect(whereWritten(loaded, "mcpServe")).toMatchObject({ layer: "managed", file: setup.paths.managed });
  });
});
