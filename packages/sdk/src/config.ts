/**
 * `defineConfig`: types for `rein.config.ts`. An identity function: it exists so
 * an editor checks and completes the config; loading, resolving specifiers and
 * validating at run time are the CLI's job.
 */
import type { AnyAgentTool, ThinkingLevel } from "@rein/harness";
import type { AnyReinPlugin } from "./plugin.js";
import type { ScriptStep } from "./scripted-model.js";

/** A custom model (an OpenAI-compatible endpoint such as Ollama, llama.cpp server or vLLM). */
export interface CustomModelConfig {
  /** The model id sent to the endpoint; also how `model` refers to it (`<provider>/<id>` or `<id>`). */
  id: string;
  /** Display name. */
  name?: string;
  /** e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** pi-ai API the endpoint speaks. Default `openai-completions`. */
  api?: string;
  /** Provider name for `<provider>/<id>` references. Default `custom`. */
  provider?: string;
  contextWindow?: number;
  maxTokens?: number;
  reasoning?: boolean;
  /** Environment variable holding the API key, if the endpoint needs one. */
  apiKeyEnv?: string;
  headers?: Record<string, string>;
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

export interface ReinConfig {
  /** `provider/id` from pi-ai or a custom model; or a scripted model for offline runs. */
  model?: string | { script: ScriptStep[] };
  models?: CustomModelConfig[];
  /** Loaded in this order; the order is also tap order within a stage. */
  plugins?: PluginEntry[];
  tools?: {
    /** The tools the model sees; default every registered tool. */
    active?: string[];
  };
  session?: {
    /** Where sessions are kept. Default `.rein/sessions`. */
    dir?: string;
  };
  systemPrompt?: string;
  thinkingLevel?: ThinkingLevel;
  /** Automatic compaction: `enabled` (default true), `reserveTokens` (16 384), `keepRecentTokens` (20 000). */
  compaction?: { enabled?: boolean; reserveTokens?: number; keepRecentTokens?: number };
  /** `rein mcp serve`: `hideDenied` leaves tools the gates deny outright out of `tools/list`. */
  mcpServe?: { hideDenied?: boolean };
  /**
   * Retry of transient model errors (the only retry: provider clients' own retries
   * are off): `enabled` (default true), `maxAttempts` (4, the first call
   * included), `baseDelayMs` (2 000, doubled per retry), `maxDelayMs` (60 000).
   */
  retry?: { enabled?: boolean; maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number };
  /**
   * Durable approvals: with `park: true` an `ask` nobody can answer (no terminal) parks
   * the run (exit code 3) instead of denying the call; answer it later with
   * `rein approvals approve|deny <id>` and continue with `rein run --session <id> --resume`.
   */
  approvals?: { park?: boolean };
}

/** Returns `config` unchanged; typed for `rein.config.ts`. */
export function defineConfig(config: ReinConfig): ReinConfig {
  return config;
}
