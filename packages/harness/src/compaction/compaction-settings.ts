/**
 * Compaction settings: live config (`AgentHarnessOptions.compaction`,
 * `harness.setCompactionSettings()`), read at every decision point.
 */
import type { Model } from "@earendil-works/pi-ai";
import { invalidArgument } from "../errors.js";

export interface CompactionSettings {
  /**
   * Automatic compaction (before a request that would not fit, after a context
   * overflow). `false` disables both; `harness.compact()` still works. Default `true`.
   */
  enabled: boolean;
  /**
   * Tokens kept free below the model's context window: a request whose estimate
   * exceeds `contextWindow - reserveTokens` is compacted first. Also bounds the
   * summary's own output (80 % of it). Default 16 384.
   */
  reserveTokens: number;
  /** Tokens of recent context kept verbatim after the summary. Default 20 000. */
  keepRecentTokens: number;
}

export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = {
  enabled: true,
  reserveTokens: 16_384,
  keepRecentTokens: 20_000,
};

/** Merges a partial update into settings, validating every field. */
export function resolveCompactionSettings(
  base: Readonly<CompactionSettings>,
  update: Partial<CompactionSettings> | undefined,
): CompactionSettings {
  const next = { ...base, ...update };
  if (typeof next.enabled !== "boolean") throw invalidArgument("compaction.enabled must be a boolean");
  for (const key of ["reserveTokens", "keepRecentTokens"] as const) {
    if (!Number.isInteger(next[key]) || next[key] < 0) {
      throw invalidArgument(`compaction.${key} must be an integer >= 0, not ${String(next[key])}`);
    }
  }
  return next;
}

/**
 * The largest request (in estimated tokens) sent without compacting first, or
 * `undefined` when the model reports no usable window (then only an overflow
 * error triggers automatic compaction).
 */
// biome-ignore lint/suspicious/noExplicitAny: any provider API.
export function compactionThreshold(model: Model<any>, settings: CompactionSettings): number | undefined {
  const window = model.contextWindow;
  if (!(window > 0)) return undefined;
  const threshold = window - settings.reserveTokens;
  return threshold > 0 ? threshold : undefined;
}

/** Output tokens a summary may use: 80 % of the reserve, within the model's own limit. */
// biome-ignore lint/suspicious/noExplicitAny: any provider API.
export function summaryMaxTokens(model: Model<any>, settings: CompactionSettings): number {
  const wanted = Math.max(256, Math.floor(settings.reserveTokens * 0.8));
  return model.maxTokens > 0 ? Math.min(wanted, model.maxTokens) : wanted;
}
