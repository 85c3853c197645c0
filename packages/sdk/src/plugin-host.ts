/**
 * `loadPlugins`: applies plugins and tool packs to one harness, in order, and
 * takes them off again.
 *
 * Invariants:
 * - Everything that can be checked without side effects is checked first (entry
 *   shapes, unique names, options against their schemas), so a bad config never
 *   leaves a half-loaded harness behind.
 * - Entries are applied in the order given; that is also tap order within a stage.
 * - If applying an entry fails, every entry applied so far (including the failing
 *   one's partial registrations) is disposed before the error is thrown: the
 *   harness is left as it was.
 * - `dispose()` goes in reverse order, awaits async cleanups, attempts every
 *   plugin even when one fails, then reports all failures at once.
 */
import type { AgentHarness, AnyAgentTool } from "@rein/harness";
import type { TapRecord } from "./attributed-hooks.js";
import {
  atEntry,
  cleanupFailures,
  duplicatePlugin,
  invalidPlugin,
  isSdkError,
  pluginCause,
  pluginSetupFailed,
  type SdkError,
} from "./errors.js";
import { type LogSink, stderrSink } from "./logger.js";
import { type AnyReinPlugin, checkPluginName, checkRuleName, isReinPlugin } from "./plugin.js";
import { resolvePluginOptions } from "./plugin-options.js";
import { PluginScope } from "./plugin-scope.js";
import { isAgentToolLike } from "./tool.js";

/** What `loadPlugins` accepts: a plugin, a plugin with its options, or a tool pack (an array of tools). */
export type PluginHostEntry = AnyReinPlugin | readonly [AnyReinPlugin, unknown?] | readonly AnyAgentTool[];

export interface LoadPluginsOptions {
  /** Where plugin loggers write. Default: stderr (`debug` only with `REIN_DEBUG`). */
  logger?: LogSink;
  /** How long a plugin's `setup` (and each cleanup) may take before it fails, in ms. Default 60 000. */
  setupTimeoutMs?: number;
}

const SETUP_TIMEOUT_MS = 60_000;

/** One loaded entry, as `rein plugins` shows it. */
export interface LoadedPlugin {
  name: string;
  version: string | undefined;
  kind: "plugin" | "tool-pack";
  /** Each tap, with its hook and stage, in registration order. */
  taps: readonly TapRecord[];
  /** Names of the tools it added. */
  tools: readonly string[];
  /** Event listeners it has registered. */
  listeners: number;
  /** The rules it declares (`rules` in its definition), as `by` names them: `<plugin>:<rule>`. */
  rules: readonly string[];
}

export interface PluginHost {
  readonly harness: AgentHarness;
  /** The loaded plugins and tool packs, in load order (empty once disposed). */
  readonly plugins: readonly LoadedPlugin[];
  readonly disposed: boolean;
  /**
   * Disposes every entry in reverse order. All are attempted; if any cleanup
   * failed, rejects afterwards with `SdkError` `plugin_cleanup` listing them.
   */
  dispose(): Promise<void>;
}

interface PlannedEntry {
  name: string;
  version: string | undefined;
  plugin?: AnyReinPlugin;
  options?: unknown;
  tools?: readonly AnyAgentTool[];
}

function plan(entry: unknown, index: number): PlannedEntry {
  try {
    return planEntry(entry, index);
  } catch (error) {
    throw isSdkError(error) && error.index === undefined ? atEntry(error, index) : error;
  }
}

function planEntry(entry: unknown, index: number): PlannedEntry {
  if (isReinPlugin(entry)) return planPlugin(entry, undefined);
  if (Array.isArray(entry)) {
    if (entry.length > 0 && isReinPlugin(entry[0])) {
      if (entry.length > 2) {
        throw invalidPlugin(`plugins[${index}]: expected [plugin, options], got ${entry.length} elements`);
      }
      return planPlugin(entry[0], entry[1]);
    }
    const name = `tools[${index}]`;
    const notTool = entry.findIndex((tool) => !isAgentToolLike(tool));
    if (notTool >= 0) {
      throw invalidPlugin(
        `plugins[${index}]: element ${notTool} is neither a tool (defineTool) nor, as first element, a plugin`,
        name,
      );
    }
    return { name, version: undefined, tools: entry as AnyAgentTool[] };
  }
  const hint =
    typeof entry === "string"
      ? ` (module specifiers like ${JSON.stringify(entry)} are resolved by the CLI; pass the imported plugin)`
      : "";
  throw invalidPlugin(`plugins[${index}] is not a plugin, [plugin, options] or an array of tools${hint}`);
}

function planPlugin(plugin: AnyReinPlugin, rawOptions: unknown): PlannedEntry {
  const problem = checkPluginName(plugin.name);
  if (problem) throw invalidPlugin(problem, plugin.name);
  return {
    name: plugin.name,
    version: plugin.version,
    plugin,
    options: resolvePluginOptions(plugin.name, plugin.options, rawOptions),
  };
}

function describeScope(
  scope: PluginScope,
  kind: LoadedPlugin["kind"],
  rules: readonly string[],
): LoadedPlugin {
  return {
    name: scope.name,
    version: scope.version,
    kind,
    taps: scope.taps.map((tap) => ({ ...tap })),
    tools: scope.tools.map((tool) => tool.name),
    listeners: scope.listenerCount,
    rules: rules.map((rule) => `${scope.name}:${rule}`),
  };
}

/** The rules a plugin declares for its options; a malformed list is an `invalid_plugin` error naming it. */
async function declaredRules(entry: PlannedEntry, scope: PluginScope): Promise<readonly string[]> {
  const declared = entry.plugin?.rules;
  if (declared === undefined) return [];
  let rules: unknown;
  try {
    rules =
      typeof declared === "function"
        ? await scope.runPluginCode("rules", undefined, declared, entry.plugin, entry.options)
        : declared;
  } catch (error) {
    const cause = pluginCause(error);
    throw invalidPlugin(
      `plugin "${entry.name}": rules(options) threw: ${cause instanceof Error ? cause.message : String(cause)}`,
      entry.name,
    );
  }
  if (!Array.isArray(rules)) {
    throw invalidPlugin(
      `plugin "${entry.name}": rules(options) must return a list of rule names`,
      entry.name,
    );
  }
  for (const rule of rules) {
    const problem = checkRuleName(rule);
    if (problem) throw invalidPlugin(`plugin "${entry.name}": ${problem}`, entry.name);
  }
  return [...new Set(rules as string[])];
}

async function disposeAll(scopes: readonly PluginScope[]): Promise<SdkError[]> {
  const failures: SdkError[] = [];
  for (const scope of [...scopes].reverse()) failures.push(...(await scope.dispose()));
  return failures;
}

async function apply(entry: PlannedEntry, scope: PluginScope, timeoutMs: number): Promise<void> {
  if (entry.tools) {
    for (const tool of entry.tools) scope.registerTool(tool);
    return;
  }
  const plugin = entry.plugin as AnyReinPlugin;
  let cleanup: unknown;
  try {
    // Through the harness's plugin driver, like every plugin function: tagged, tracked, timed.
    cleanup = await scope.runPluginCode("setup", timeoutMs, plugin.setup, plugin, scope.rein, entry.options);
  } catch (error) {
    const cause = pluginCause(error);
    // The SDK's own errors (duplicate_tool, ...) already name the plugin: keep their code.
    if (isSdkError(cause) && cause.plugin !== undefined) throw cause;
    throw pluginSetupFailed(entry.name, cause);
  }
  if (typeof cleanup === "function") scope.addCleanup(cleanup as () => void);
  else if (cleanup !== undefined) {
    throw invalidPlugin(
      `plugin "${entry.name}": setup returned something other than a cleanup function`,
      entry.name,
    );
  }
}

/**
 * Applies plugins and tool packs to `harness`, in order. Rejects (leaving the
 * harness as it was) on a malformed entry, a duplicate plugin name, invalid
 * options, a setup failure or a tool name registered twice.
 */
export async function loadPlugins(
  harness: AgentHarness,
  entries: readonly PluginHostEntry[],
  options: LoadPluginsOptions = {},
): Promise<PluginHost> {
  const sink = options.logger ?? stderrSink;
  const timeoutMs = options.setupTimeoutMs ?? SETUP_TIMEOUT_MS;
  const planned = entries.map((entry, index) => plan(entry, index));
  const seen = new Set<string>();
  for (const entry of planned) {
    if (seen.has(entry.name)) throw duplicatePlugin(entry.name);
    seen.add(entry.name);
  }

  const scopes: { scope: PluginScope; kind: LoadedPlugin["kind"]; rules: readonly string[] }[] = [];
  for (const entry of planned) {
    const scope = new PluginScope(harness, entry.name, entry.version, sink, timeoutMs);
    const loaded: (typeof scopes)[number] = { scope, kind: entry.tools ? "tool-pack" : "plugin", rules: [] };
    scopes.push(loaded);
    try {
      loaded.rules = await declaredRules(entry, scope);
      await apply(entry, scope, timeoutMs);
    } catch (caught) {
      const index = scopes.length - 1;
      const error = isSdkError(caught) && caught.index === undefined ? atEntry(caught, index) : caught;
      const rollback = await disposeAll(scopes.map((s) => s.scope));
      for (const failure of rollback) {
        sink({ level: "error", plugin: failure.plugin ?? entry.name, message: failure.message, args: [] });
      }
      throw error;
    }
  }

  let disposing: Promise<void> | undefined;
  return {
    harness,
    get plugins() {
      return scopes
        .filter(({ scope }) => !scope.disposed)
        .map(({ scope, kind, rules }) => describeScope(scope, kind, rules));
    },
    get disposed() {
      return disposing !== undefined;
    },
    dispose() {
      disposing ??= (async () => {
        const failures = await disposeAll(scopes.map((s) => s.scope));
        if (failures.length > 0) throw cleanupFailures(failures);
      })();
      return disposing;
    },
  };
}
