/**
 * Reloads an agent's plugins and config between turns, keeping its session
 * (`/reload` in chat, `rein dev` on file changes).
 *
 * Invariants: a reload only happens while the harness is idle; the edited config
 * and plugins are first loaded into a scratch harness, so a broken edit is
 * reported and the running stack is kept as it was (never left without its
 * policies); every other config key is applied or, when it changed, reported as
 * needing a restart, as its entry in the config wiring (config-wiring.ts) says
 * (the model is not swapped: restart to use it). Modules are re-evaluated (jiti
 * `moduleCache: false`).
 */
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
import { type ConfigKeyName, loadPlugins, type ReinConfig } from "@rein/sdk";
import { pluginLoadError } from "../config/entry-location.js";
import { loadConfig } from "../config/load-config.js";
import { resolvePlugins } from "../config/resolve-plugins.js";
import { whereWritten } from "../config/value-origin.js";
import { configError, usageError } from "../errors.js";
import type { Agent } from "./build-agent.js";
import { CONFIG_WIRING, type KeyWiring } from "./config-wiring.js";

export interface ReloadReport {
  plugins: string[];
  tools: number;
  /** The config now names another model than the one running (not swapped). */
  modelChanged: boolean;
  /** Keys that changed but are not applied by a reload, each with the reason. */
  restart: { key: ConfigKeyName; reason: string }[];
}

export async function reloadAgent(
  agent: Agent,
  where: { cwd: string; configPath?: string | undefined; flags?: ReinConfig | undefined },
): Promise<ReloadReport> {
  const { harness } = agent;
  if (harness.phase !== "idle") throw usageError("cannot reload while a run is in progress");
  const loaded = await loadConfig({
    cwd: where.cwd,
    configPath: where.configPath,
    fresh: true,
    flags: where.flags,
    // The chat owns the terminal: a changed file is refused with the line naming it.
    askTrust: false,
  });
  const plugins = await resolvePlugins(loaded);
  const entries = plugins.map((p) => p.entry);
  const active = loaded.config.tools?.active;

  // Dry run on a scratch harness: setup errors and bad options surface here.
  const scratch = new AgentHarness({ session: Session.create(new MemoryStorage()), model: harness.model });
  try {
    const host = await loadPlugins(scratch, entries).catch((error: unknown) => {
      throw error instanceof Error && "exitCode" in error ? error : pluginLoadError(loaded, plugins, error);
    });
    try {
      if (active) scratch.setActiveTools(active);
    } catch (error) {
      // Reported where the list was written: the layer that set tools.active.
      throw configError(`tools.active: ${(error as Error).message}`, whereWritten(loaded, "tools.active"));
    } finally {
      await host.dispose();
    }
  } finally {
    await scratch.close(1_000);
  }

  const previous = agent.plugins.map((p) => p.entry);
  await agent.host.dispose();
  try {
    agent.host = await loadPlugins(harness, entries);
  } catch (error) {
    // Passed on the scratch harness but not here: put the previous stack back, and
    // if even that fails, deny every call rather than run without the policies.
    try {
      agent.host = await loadPlugins(harness, previous);
    } catch {
      harness.setDefaultToolVerdict("deny");
    }
    throw pluginLoadError(loaded, plugins, error);
  }
  const restart = await applyConfig(agent, loaded.config);
  agent.loaded = loaded;
  agent.plugins = plugins;
  return {
    plugins: agent.host.plugins.map((p) => p.name),
    tools: harness.tools.length,
    modelChanged: restart.some((change) => change.key === "model"),
    restart,
  };
}

/**
 * Applies each key of `next` that differs from the running config by its wiring;
 * returns the changed keys that need a restart. The active tools are set again
 * every time: the reloaded plugins may have changed the tool registry.
 */
async function applyConfig(agent: Agent, next: ReinConfig): Promise<ReloadReport["restart"]> {
  const running = agent.loaded.config;
  const restart: ReloadReport["restart"] = [];
  const defaults = new AgentHarness({
    session: Session.create(new MemoryStorage()),
    model: agent.harness.model,
    recover: false,
  });
  try {
    for (const [key, wiring] of Object.entries(CONFIG_WIRING) as [
      ConfigKeyName,
      KeyWiring<ConfigKeyName>,
    ][]) {
      const changed = JSON.stringify(next[key]) !== JSON.stringify(running[key]);
      if (!changed && key !== "tools") continue;
      if ("restart" in wiring.reload) restart.push({ key, reason: wiring.reload.restart });
      else wiring.reload.live(next[key] as never, { agent, defaults });
    }
  } finally {
    await defaults.close(1_000);
  }
  return restart;
}
