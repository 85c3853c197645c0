/**
 * Where the CLI looks for Agent Skills, in precedence order (the first skill of
 * a name wins; later ones are reported as shadowed):
 *
 * 1. `<project>/.rein/skills/`  2. `<project>/.agents/skills/`
 * 3. `<project>/.claude/skills/` (only with `skills.claude: true`)
 * 4. `skills.paths`, in order (relative to the config file)
 * 5. the user's `$XDG_CONFIG_HOME/rein/skills/`
 * 6. plugin packages' `skills/` folders, in plugin order.
 *
 * The project's own skills come first: they describe this project. A skill folder
 * must resolve inside its source's boundary (the project for project folders),
 * and nothing is read from Rein's own state: the session folder, the rest of
 * `.rein/`, or the user's Rein config dir outside its `skills/`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { discoverSkills, type SkillDiscovery, type SkillSource } from "@rein/sdk";
import { sessionDir } from "../agent/session-backend.js";
import { userConfigDir } from "../config/layers.js";
import type { LoadedConfig } from "../config/load-config.js";
import type { ResolvedEntry } from "../config/resolve-plugins.js";

/** `.rein/` entries that hold skills and templates: text people write; the rest is Rein's state. */
const PROJECT_CONTENT = new Set(["skills", "prompts"]);

export function skillSources(loaded: LoadedConfig, plugins: readonly ResolvedEntry[] = []): SkillSource[] {
  const options = loaded.config.skills;
  if (options?.enabled === false) return [];
  const root = loaded.dir;
  const project = (label: string, dir: string): SkillSource => ({
    label,
    dir: join(root, dir),
    boundary: root,
  });
  const sources = [project("project", ".rein/skills"), project("agents", ".agents/skills")];
  if (options?.claude === true) sources.push(project("claude", ".claude/skills"));
  for (const path of options?.paths ?? []) {
    const dir = isAbsolute(path) ? path : resolve(root, path);
    sources.push({ label: "config", dir });
  }
  sources.push({ label: "user", dir: join(userConfigDir(), "skills") });
  for (const plugin of plugins) {
    const packageRoot = pluginPackageRoot(plugin);
    if (packageRoot) sources.push({ label: `plugin:${plugin.source}`, dir: join(packageRoot, "skills") });
  }
  return sources;
}

/** Rein's own state, never read as skills. */
export function reinState(loaded: LoadedConfig): string[] {
  const state = [sessionDir(loaded)];
  const listed = (dir: string, keep: (name: string) => boolean) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((name) => !keep(name))
          .map((name) => join(dir, name))
      : [];
  state.push(...listed(join(loaded.dir, ".rein"), (name) => PROJECT_CONTENT.has(name)));
  state.push(...listed(userConfigDir(), (name) => name === "skills"));
  return state;
}

export function findSkills(loaded: LoadedConfig, plugins: readonly ResolvedEntry[] = []): SkillDiscovery {
  return discoverSkills(skillSources(loaded, plugins), { refuse: reinState(loaded) });
}

const packageName = (specifier: string) => {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string);
};

/** The folder of the npm package a plugin was loaded from (bare specifiers only), if found. */
function pluginPackageRoot(plugin: ResolvedEntry): string | undefined {
  const { source, file } = plugin;
  if (!file || source === "inline" || /^(\.|\/|file:|[A-Za-z]:)/.test(source)) return undefined;
  const name = packageName(source);
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    try {
      if ((JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === name) return dir;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
