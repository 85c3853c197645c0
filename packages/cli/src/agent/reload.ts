/**
 * Reloads an agent's plugins and config between turns, keeping its session
 * (`/reload` in chat, `rein dev` on file changes).
 *
 * Invariants: a reload only happens while the harness is idle; the edited config
 * and plugins are first loaded into a scratch harness, so a broken edit is
 * reported and the running stack is kept as it was (never left without its
 * policies); the model is not swapped (a changed `model` is reported: restart to
 * use it). Modules are re-evaluated (jiti `moduleCache: false`).
 */
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
import { loadPlugins, type ReinConfig } from "@rein/sdk";
import { pluginLoadError } from "../config/entry-location.js";
import { loadConfig } from "../config/load-config.js";
import { resolvePlugins } from "../config/resolve-plugins.js";
import { whereWritten } from "../config/value-origin.js";
import { configError, usageError } from "../errors.js";
import { attachSkills } from "../skills/attach-skills.js";
import { findSkills } from "../skills/skill-sources.js";
import type { Agent } from "./build-agent.js";

export interface ReloadReport {
  plugins: string[];
  tools: number;
  /** The config now names another model than the one running (not swapped). */
  modelChanged: boolean;
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
  // Skills are read again (a new or edited SKILL.md applies from the next prompt).
  attachSkills(harness, findSkills(loaded, plugins).skills);
  harness.setActiveTools(active);
  // The system prompt stays the instructions' function (AGENTS.md); only its base changes.
  if (loaded.config.systemPrompt !== undefined) agent.instructions.base = loaded.config.systemPrompt;
  if (loaded.config.thinkingLevel !== undefined) harness.setThinkingLevel(loaded.config.thinkingLevel);
  if (loaded.config.compaction !== undefined) harness.setCompactionSettings(loaded.config.compaction);
  const configured = loaded.config.model;
  const running = agent.loaded.config.model;
  agent.loaded = loaded;
  agent.plugins = plugins;
  return {
    plugins: agent.host.plugins.map((p) => p.name),
    tools: harness.tools.length,
    modelChanged: JSON.stringify(configured) !== JSON.stringify(running),
  };
}
