/**
 * `defineConfig`: types for `rein.config.ts`. An identity function: it exists so
 * an editor checks and completes the config; loading, resolving specifiers and
 * validating at run time are the CLI's job.
 */
import type { AnyAgentTool } from "@rein/harness";
import type { Static, TSchema } from "typebox";
import type { CONFIG_TABLE, ConfigValueOf } from "./config-table.js";
import type { AnyReinPlugin, ReinPlugin } from "./plugin.js";

/** A custom model (an OpenAI-compatible endpoint such as Ollama, llama.cpp server or vLLM). */
export interface CustomModelConfig {
  /** The model id sent to the endpoint; also how `model` refers to it (`<provider>/<id>` or `<id>`). */
  id: string;
  /** Display name. */
  name?: string;
  /** e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /**
   * pi-ai API the endpoint speaks: `openai-completions` (default), `openai-responses`,
   * `anthropic-messages`, `google-generative-ai`, `mistral-conversations`,
   * `bedrock-converse-stream` or `azure-openai-responses`.
   */
  api?: string;
  /** Provider name for `<provider>/<id>` references. Default `custom`. */
  provider?: string;
  contextWindow?: number;
  /** Most tokens the model may write per reply (sent as the request's max tokens; pi-ai caps it at 32 000). Default 4 096. */
  maxTokens?: number;
  /** The model thinks: `thinkingLevel` is sent as its reasoning effort. Default false. */
  reasoning?: boolean;
  /** What it accepts: `["text"]` (default) or `["text", "image"]`. */
  input?: ("text" | "image")[];
  /** Sampling temperature sent with every request (default: the endpoint's). */
  temperature?: number;
  /**
   * Prices in dollars per million tokens, so `usage.cost` is computed (totals,
   * `@rein/plugin-guard`'s `maxCost`). Default 0 each.
   */
  cost?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
  /** Environment variable holding the API key, if the endpoint needs one. */
  apiKeyEnv?: string;
  headers?: Record<string, string>;
  /**
   * pi-ai's compatibility flags for the model, as in its catalogue (e.g.
   * `{ forceAdaptiveThinking: true }` for an Anthropic model that needs adaptive thinking
   * and an effort, `{ supportsReasoningEffort: false }` for a server without
   * `reasoning_effort`), so a model released after this pi-ai can be added from config.
   */
  compat?: Record<string, unknown>;
  /**
   * pi-ai's thinking-level map: which Rein thinking levels the model offers and the
   * provider value each is sent as (`null`: not offered; `xhigh` and `max` need an entry).
   */
  thinkingLevelMap?: Partial<
    Record<"off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max", string | null>
  >;
}

/**
 * One entry of `plugins`: an npm package name or relative path (resolved by the
 * CLI), the same with options, an inline plugin (optionally with options), or a
 * tool pack (an array of `defineTool` values).
 */
export type PluginEntry =
  | string
  | readonly [specifier: string, options: unknown]
  | AnyReinPlugin
  | readonly [plugin: AnyReinPlugin, options: unknown]
  | readonly AnyAgentTool[];

/**
 * `rein.config.ts`'s shape: one optional field per key of the config table
 * (config-table.ts), typed and documented there.
 */
export type ReinConfig = {
  -readonly [K in keyof typeof CONFIG_TABLE]?: ConfigValueOf<(typeof CONFIG_TABLE)[K]>;
};

/** Returns `config` unchanged; typed for `rein.config.ts`. */
export function defineConfig(config: ReinConfig): ReinConfig {
  return config;
}

/**
 * Options as a config writes them: the schema's types, every field optional
 * (schema defaults fill them in, and a missing required one is reported when the
 * plugin loads). Types are checked as written: a wrong type is a compile error.
 */
export type OptionsInput<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? readonly OptionsInput<U>[]
    : T extends object
      ? { [K in keyof T]?: OptionsInput<T[K]> }
      : T;

/** What a config may pass as a plugin's options, from the plugin's own schema. */
export type PluginOptionsInput<P> =
  P extends ReinPlugin<infer S> ? (S extends TSchema ? OptionsInput<Static<S>> : undefined) : never;

/**
 * A plugin with its options, typed from the plugin's schema, for `plugins` in
 * `rein.config.ts`: `plugin(policy, { rules: [...] })` where `policy` is the
 * imported plugin. The editor completes and checks the options; at run time the
 * entry is `[plugin, options]`, the same as writing the tuple by hand.
 */
export function plugin<P extends AnyReinPlugin>(
  definition: P,
  options: PluginOptionsInput<P>,
): readonly [P, PluginOptionsInput<P>] {
  return [definition, options] as const;
}
