/**
 * `definePlugin` and the types a plugin is written against: the plugin value
 * itself (`ReinPlugin`) and the `rein` object its `setup` receives (`Rein`).
 *
 * Invariant: a value `definePlugin` returns is well-formed (valid name, a
 * `setup` function, a schema if options are declared) and frozen; options are not
 * checked here but when the plugin is loaded, because only then are they known.
 * Plugin names never contain `:`, which separates plugin and rule in `by`.
 */
import type {
  AnyAgentTool,
  ConfigView,
  DefaultToolVerdict,
  EventListener,
  EventOf,
  EventType,
  HarnessHooks,
  SessionFacade,
} from "@rein/harness";
import type { Static, TSchema } from "typebox";
import { invalidPlugin } from "./errors.js";
import type { PluginLogger } from "./logger.js";

/** Undoes what a plugin set up; may be async. Runs when the plugin is disposed. */
export type Cleanup = () => void | Promise<void>;

/** What `setup` may return: nothing, or a cleanup (directly or from an async setup). */
// biome-ignore lint/suspicious/noConfusingVoidType: a setup with nothing to clean up simply returns.
export type SetupResult = void | Cleanup | Promise<void | Cleanup>;

/** The options `setup` receives: the schema's static type (defaults applied), or `undefined` without a schema. */
export type PluginOptions<TOptions extends TSchema | undefined> = TOptions extends TSchema
  ? Static<TOptions>
  : undefined;

/** What a plugin can do, scoped to it: everything it registers is removed when it is disposed. */
export interface Rein {
  /** The plugin this object belongs to. */
  readonly plugin: { readonly name: string; readonly version: string | undefined };
  /**
   * The harness's decision hooks (Tapable). Use `tap` / `tapPromise` / `tapAsync` with a
   * name or `{ name, stage, before, timeout }`; the registered tap name is always the
   * plugin's name, so decisions read `by: "<plugin>"` (or `"<plugin>:<rule>"` when a
   * gate verdict carries `rule`).
   */
  readonly hooks: HarnessHooks;
  /** Observes one event type; listeners can never change a decision. Returns a disposer. */
  on<K extends EventType>(type: K, listener: EventListener<EventOf<K>>): () => void;
  /** Observes every event. Returns a disposer. */
  subscribe(listener: EventListener): () => void;
  /**
   * Adds a tool to the registry (the config decides which tools are active). A name
   * another plugin (or the harness) already registered is a `duplicate_tool` error.
   * Returns a disposer that removes the tool.
   */
  registerTool(tool: AnyAgentTool): () => void;
  /** The live config, read-only. */
  readonly config: ConfigView;
  /** Session reads, and writes (`append`) that obey the pending-write rule. */
  readonly session: SessionFacade;
  /** Logs prefixed with the plugin's name, to the host's sink (stderr by default). */
  readonly logger: PluginLogger;
  /**
   * Sets the verdict used when no gate tap has an opinion (the core default is
   * `allow`). Restored to the previous verdict when the plugin is disposed, unless
   * someone changed it since.
   */
  setDefaultToolVerdict(verdict: DefaultToolVerdict): void;
  /** Registers an extra cleanup, run (with the others, in reverse order) on dispose. */
  onDispose(cleanup: Cleanup): void;
}

export interface PluginDefinition<TOptions extends TSchema | undefined = undefined> {
  /** Unique within a harness; used as tap name and in every decision and error. No `:`. */
  name: string;
  version?: string;
  description?: string;
  /** A typebox schema for the options; checked (with defaults applied) before `setup`. */
  options?: TOptions;
  /** Registers hooks, listeners and tools. May return a cleanup, or be async. */
  setup(rein: Rein, options: PluginOptions<TOptions>): SetupResult;
  /**
   * The rules this plugin decides by: each is the `<rule>` of `by: "<plugin>:<rule>"`
   * in its verdicts. A list, or a function of the (checked) options for rules that
   * come from the config. Listed by `rein plugins` and counted by
   * `rein replay --coverage`, which reports the ones that never matched.
   */
  rules?: readonly string[] | ((options: PluginOptions<TOptions>) => readonly string[]);
}

export interface ReinPlugin<TOptions extends TSchema | undefined = TSchema | undefined>
  extends Readonly<PluginDefinition<TOptions>> {
  readonly kind: "rein-plugin";
}

// biome-ignore lint/suspicious/noExplicitAny: a list of plugins holds every options type.
export type AnyReinPlugin = ReinPlugin<any>;

/** Plugin names: npm-like (`@scope/name`, `no-secrets`, `house.rules`), never `:`. */
export const PLUGIN_NAME_PATTERN = /^@?[A-Za-z0-9][A-Za-z0-9._\-/@]{0,213}$/;

const RESERVED_NAMES = new Set(["harness", "subscriber"]);

export function checkPluginName(name: unknown): string | undefined {
  if (typeof name !== "string" || !PLUGIN_NAME_PATTERN.test(name)) {
    return `plugin name ${JSON.stringify(name)} is invalid (letters, digits, . _ - / @; no ":")`;
  }
  if (RESERVED_NAMES.has(name)) return `plugin name "${name}" is reserved by the harness`;
  return undefined;
}

export function definePlugin<TOptions extends TSchema | undefined = undefined>(
  definition: PluginDefinition<TOptions>,
): ReinPlugin<TOptions> {
  if (typeof definition !== "object" || definition === null) {
    throw invalidPlugin("definePlugin expects { name, setup }");
  }
  const problem = checkPluginName(definition.name);
  if (problem)
    throw invalidPlugin(problem, typeof definition.name === "string" ? definition.name : undefined);
  const { name } = definition;
  if (typeof definition.setup !== "function") {
    throw invalidPlugin(`plugin "${name}": setup must be a function`, name);
  }
  if (definition.version !== undefined && typeof definition.version !== "string") {
    throw invalidPlugin(`plugin "${name}": version must be a string`, name);
  }
  if (
    definition.options !== undefined &&
    (typeof definition.options !== "object" || definition.options === null)
  ) {
    throw invalidPlugin(
      `plugin "${name}": options must be a typebox schema, e.g. Type.Object({ ... })`,
      name,
    );
  }
  if (
    definition.rules !== undefined &&
    typeof definition.rules !== "function" &&
    !(Array.isArray(definition.rules) && definition.rules.every((rule) => checkRuleName(rule) === undefined))
  ) {
    throw invalidPlugin(
      `plugin "${name}": rules must be a list of rule names (no ":" or spaces) or a function of the options returning one`,
      name,
    );
  }
  return Object.freeze({ ...definition, kind: "rein-plugin" as const });
}

/** Rule names: what follows `<plugin>:` in `by`, so no `:` and no whitespace. */
export function checkRuleName(rule: unknown): string | undefined {
  if (typeof rule !== "string" || !/^[^:\s]+$/.test(rule)) {
    return `rule name ${JSON.stringify(rule)} is invalid (no ":" or whitespace)`;
  }
  return undefined;
}

/** Whether a value is a plugin (made by `definePlugin`, or hand-written with a name and a setup). */
export function isReinPlugin(value: unknown): value is AnyReinPlugin {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { name?: unknown }).name === "string" &&
    typeof (value as { setup?: unknown }).setup === "function"
  );
}
