/**
 * Retrying transient provider failures (rate limits, overload, network).
 *
 * Invariants: a retry is only ever made for a closed assistant message with
 * `stopReason: "error"` whose error looks transient; a context overflow or an
 * abort is never retried; the number of attempts is bounded by `maxAttempts`
 * (the first call included); the backoff between attempts is exponential with
 * jitter, capped by `maxDelayMs`, and ends at once when the signal aborts.
 */
import { isContextOverflow, type Model } from "@earendil-works/pi-ai";
import { invalidArgument } from "../errors.js";
import type { AssistantMessage } from "../session/entries.js";

export interface RetrySettings {
  /** `false` turns retry off (every provider error ends the turn at once). Default `true`. */
  enabled: boolean;
  /** Provider calls per request, the first one included. Default 4 (one call, three retries). */
  maxAttempts: number;
  /** Delay before the first retry; doubled for each further retry. Default 2 000 ms. */
  baseDelayMs: number;
  /** Upper bound of one delay. Default 60 000 ms. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_SETTINGS: Readonly<RetrySettings> = {
  enabled: true,
  maxAttempts: 4,
  baseDelayMs: 2_000,
  maxDelayMs: 60_000,
};

/** What the loop needs to retry: the bounds, and optionally its own idea of "transient". */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Default: `isTransientError`. */
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  isRetryable?(message: AssistantMessage, model: Model<any>): boolean;
}

/** Merges a partial update into settings, validating every field. */
export function resolveRetrySettings(
  base: Readonly<RetrySettings>,
  update: Partial<RetrySettings> | undefined,
): RetrySettings {
  const next = { ...base, ...update };
  if (typeof next.enabled !== "boolean") throw invalidArgument("retry.enabled must be a boolean");
  if (!Number.isInteger(next.maxAttempts) || next.maxAttempts < 1) {
    throw invalidArgument(`retry.maxAttempts must be an integer >= 1, not ${String(next.maxAttempts)}`);
  }
  for (const key of ["baseDelayMs", "maxDelayMs"] as const) {
    if (typeof next[key] !== "number" || !(next[key] >= 0) || !Number.isFinite(next[key])) {
      throw invalidArgument(`retry.${key} must be a finite number >= 0, not ${String(next[key])}`);
    }
  }
  return next;
}

/** Error texts of failures worth another attempt. Status codes are matched as whole numbers. */
const TRANSIENT_PATTERNS = [
  /\b429\b/,
  /rate[ _-]?limit/i,
  /too many requests/i,
  /overloaded/i,
  /\b50[234]\b/,
  /service unavailable/i,
  /bad gateway/i,
  /gateway time-?out/i,
  /ECONNRESET/,
  /ETIMEDOUT/,
  /EAI_AGAIN/,
  /socket hang up/i,
  /network/i,
  /fetch failed/i,
];

/**
 * Whether a failed assistant message is a transient provider error: never an
 * abort, never a context overflow (retrying the same request cannot help),
 * otherwise one of the patterns above in `errorMessage`.
 */
// biome-ignore lint/suspicious/noExplicitAny: any provider API.
export function isTransientError(message: AssistantMessage, model?: Model<any>): boolean {
  if (message.stopReason !== "error") return false;
  const text = message.errorMessage ?? "";
  if (text === "") return false;
  if (isContextOverflow(message, model?.contextWindow)) return false;
  return TRANSIENT_PATTERNS.some((pattern) => pattern.test(text));
}

/**
 * The delay before retry number `retry` (1 = the first retry): exponential from
 * `baseDelayMs`, capped at `maxDelayMs`, with "equal jitter" (between half and
 * all of it) so that many clients do not retry in lockstep.
 */
export function retryDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const exponential = policy.baseDelayMs * 2 ** Math.max(0, retry - 1);
  const capped = Math.min(policy.maxDelayMs, exponential);
  if (capped <= 0) return 0;
  return Math.round(capped / 2 + (capped / 2) * random());
}

/** Waits `ms`, or less if `signal` aborts. Resolves `true` when the full wait elapsed. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
