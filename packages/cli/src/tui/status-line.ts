/**
 * The status line under the editor: the model, how much of its context the last
 * request used, the session's cost so far (none when the model has no prices, as
 * the last line), the permission mode and the shell sandbox. Read fresh on every
 * render from the agent, so `/model`, `/mode` and `/reload` show at once.
 */
import type { Agent } from "../agent/build-agent.js";
import type { Colors } from "../ui/terminal.js";
import { sessionUsage } from "../usage/usage-totals.js";

type Options = Record<string, unknown> | undefined;

/** The options the config gives the loaded plugin whose name ends with `suffix`, if it is loaded. */
function pluginOptions(agent: Agent, suffix: string): { loaded: boolean; options: Options } {
  let found: { loaded: boolean; options: Options } = { loaded: false, options: undefined };
  for (const { entry } of agent.plugins) {
    const tuple = Array.isArray(entry) ? (entry as readonly unknown[]) : [entry, undefined];
    const [plugin, options] = tuple;
    // A tool array (`[[tool, ...]]`) is no plugin.
    if ((plugin as { kind?: unknown } | undefined)?.kind !== "rein-plugin") continue;
    const name = (plugin as { name?: unknown }).name;
    if (
      typeof name === "string" &&
      (name === suffix || name.endsWith(`/${suffix}`) || name.endsWith(`-${suffix}`))
    )
      found = { loaded: true, options: options as Options };
  }
  return found;
}

/** `--permission-mode` / the plugin's `mode`; `none` without @rein/plugin-permissions (nothing asks). */
export function permissionMode(agent: Agent): string {
  const { loaded, options } = pluginOptions(agent, "permissions");
  if (!loaded) return "none";
  return typeof options?.mode === "string" ? options.mode : "default";
}

/** The shell sandbox's mode; `no shell` without @rein/tools-shell. */
export function sandboxMode(agent: Agent): string {
  const { loaded, options } = pluginOptions(agent, "tools-shell");
  if (!loaded) return "no shell";
  const sandbox = options?.sandbox as { mode?: unknown } | undefined;
  return typeof sandbox?.mode === "string" ? sandbox.mode : "workspace-write";
}

const compact = (n: number) =>
  n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);

/** The tokens the latest answered request sent (its context), from the session's record. */
function contextUsed(agent: Agent): number {
  const entries = agent.session.branch();
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (entry?.type !== "message" || entry.message.role !== "assistant") continue;
    const usage = entry.message.usage;
    if (usage)
      return (usage.input ?? 0) + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0) + (usage.output ?? 0);
  }
  return 0;
}

export function statusLine(agent: Agent, c: Colors): string {
  const model = agent.harness.model;
  const used = contextUsed(agent);
  const window = model.contextWindow ?? 0;
  const context =
    window > 0
      ? `context ${compact(used)}/${compact(window)} (${Math.round((used / window) * 100)}%)`
      : `context ${compact(used)}`;
  const totals = sessionUsage(agent.session.entries(), agent.session.header.forkedFrom);
  const parts = [
    c.bold(`${model.provider}/${model.id}`),
    context,
    ...(totals.cost.total > 0 ? [`$${totals.cost.total.toFixed(4)}`] : []),
    `mode ${permissionMode(agent)}`,
    `sandbox ${sandboxMode(agent)}`,
  ];
  return c.dim(parts.join(" · "));
}
