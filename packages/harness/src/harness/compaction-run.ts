/**
 * One compaction of the active branch, manual or automatic: plan the cut, ask
 * `beforeCompact`, write the summary (the hook's or the model's), append one
 * `compaction` entry, with `compaction_start` / `compaction_end` around it.
 *
 * Invariants:
 * - nothing is written unless the whole operation succeeds: a cancel, a hook
 *   failure, a summarizer failure or an abort leave the session as it was;
 * - the compaction entry is the only write, appended to the active leaf, so the
 *   kept tail (from `firstKeptEntryId`) and everything after it stay verbatim;
 * - a tap that throws fails the operation with `HarnessError` code `hook`
 *   naming plugin and hook (the hook table's `fail-operation` policy).
 */
import { isContextOverflow, type Model } from "@earendil-works/pi-ai";
import {
  type CompactionSettings,
  compactionThreshold,
  summaryMaxTokens,
} from "../compaction/compaction-settings.js";
import { branchInContext, findCutPoint } from "../compaction/cut-point.js";
import { filesTouched, type SummaryKind, summarize } from "../compaction/summarize.js";
import { estimateContextTokens } from "../compaction/token-estimate.js";
import { describeError, HarnessError, HarnessErrorCode, isHarnessError } from "../errors.js";
import type { CompactionReason, HarnessEvent } from "../events/event-types.js";
import { runBail } from "../hooks/create-hooks.js";
import type { HarnessHooks } from "../hooks/hook-table.js";
import type { HookContext, RequestOptions } from "../hooks/hook-types.js";
import type { StreamFunction } from "../loop/loop-types.js";
import type { RetryPolicy } from "../loop/retry.js";
import { entryMessage } from "../session/context.js";
import type { AgentMessage, AssistantMessage, SessionContext } from "../session/entries.js";
import type { Session } from "../session/session.js";

/** What compaction and tree navigation need from the harness. */
export interface OperationHost {
  readonly session: Session;
  readonly hooks: HarnessHooks;
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model(): Model<any>;
  requestOptions(): Readonly<RequestOptions>;
  streamFn(): StreamFunction;
  compactionSettings(): Readonly<CompactionSettings>;
  /** The live retry policy, `undefined` when retry is disabled. */
  retryPolicy(): RetryPolicy | undefined;
  emit(event: HarnessEvent): Promise<void>;
  hookContext(signal: AbortSignal): HookContext;
}

export interface CompactionRequest {
  reason: CompactionReason;
  signal: AbortSignal;
  /** Set for automatic compaction inside a run. */
  runId?: string | undefined;
  /** Extra instructions for the summary. */
  instructions?: string | undefined;
  /** Estimated tokens of the request's fixed part (system prompt, tool definitions). */
  fixedTokens: number | (() => number);
}

export type CompactionOutcome =
  | {
      status: "done";
      entryId: string;
      summary: string;
      firstKeptEntryId: string;
      tokensBefore: number;
      tokensAfter: number;
      /** `model`, or the `beforeCompact` tap that supplied the summary. */
      by: string;
    }
  | { status: "cancelled"; reason: string; by: string }
  | { status: "skipped"; reason: string };

/** What a compaction entry's `details` holds. */
export interface CompactionDetails {
  /** Paths named in tool calls of everything summarised so far (carried forward). */
  filesTouched: string[];
}

/** Estimated tokens of the request the next turn would send from `context`. */
export function contextTokens(context: SessionContext, fixedTokens: number | (() => number)): number {
  return estimateContextTokens(context.messages, {
    fixedTokens,
    usableFrom: context.compaction?.firstNewMessage ?? 0,
  });
}

export async function runCompaction(
  host: OperationHost,
  request: CompactionRequest,
): Promise<CompactionOutcome> {
  const { session } = host;
  const { reason, signal } = request;
  const runId = request.runId === undefined ? {} : { runId: request.runId };
  const tokensBefore = contextTokens(session.buildContext(), request.fixedTokens);

  // Plan: the kept tail starts at a cut point; everything before it is summarised.
  const settings = host.compactionSettings();
  const { compaction: previous, entries } = branchInContext(session.branch());
  const cut = findCutPoint(entries, settings.keepRecentTokens);
  const messages: AgentMessage[] = [];
  for (const entry of cut === undefined ? [] : entries.slice(0, cut)) {
    const message = entryMessage(entry);
    if (message !== undefined) messages.push(message);
  }
  if (cut === undefined || messages.length === 0) {
    const skipped = {
      status: "skipped" as const,
      reason: "nothing to compact: the whole context is the kept tail",
    };
    if (reason === "manual") {
      await host.emit({ type: "compaction_start", reason, tokensBefore, ...runId });
      await host.emit({
        type: "compaction_end",
        reason,
        status: "skipped",
        detail: skipped.reason,
        ...runId,
      });
    }
    return skipped;
  }
  const firstKeptEntryId = (entries[cut] as { id: string }).id;
  const previousSummary = previous?.summary;

  await host.emit({ type: "compaction_start", reason, tokensBefore, ...runId });
  try {
    const decision = await runBail(
      host.hooks,
      "beforeCompact",
      { trigger: reason, tokensBefore, messages, previousSummary, firstKeptEntryId },
      host.hookContext(signal),
    );
    if (decision && "cancel" in decision) {
      const detail = decision.cancel.reason;
      await host.emit({
        type: "compaction_end",
        reason,
        status: "cancelled",
        detail,
        by: decision.by,
        ...runId,
      });
      return { status: "cancelled", reason: detail, by: decision.by };
    }
    let summary: string;
    let by = "model";
    if (decision && "summary" in decision) {
      summary = decision.summary;
      by = decision.by;
    } else {
      summary = await modelSummary(host, "compaction", messages, previousSummary, request);
    }
    if (signal.aborted) throw abortError(signal);

    const details: CompactionDetails = {
      filesTouched: [...new Set([...previousFiles(previous?.details), ...filesTouched(messages)])],
    };
    const entry = session.append({ type: "compaction", summary, firstKeptEntryId, tokensBefore, details });
    const stored = session.whenStored(); // an asynchronous storage: stored before broadcast
    if (stored) await stored;
    const tokensAfter = contextTokens(session.buildContext(), request.fixedTokens);
    await host.emit({
      type: "compaction_end",
      reason,
      status: "done",
      entryId: entry.id,
      firstKeptEntryId,
      tokensBefore,
      tokensAfter,
      by,
      ...runId,
    });
    return { status: "done", entryId: entry.id, summary, firstKeptEntryId, tokensBefore, tokensAfter, by };
  } catch (error) {
    const status =
      isHarnessError(error, "aborted") || (signal.aborted && !isHarnessError(error, "hook"))
        ? "aborted"
        : "failed";
    await host.emit({ type: "compaction_end", reason, status, detail: describeError(error), ...runId });
    throw status === "aborted" && !isHarnessError(error, "aborted") ? abortError(signal, error) : error;
  }
}

interface AutoCompaction {
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  signal: AbortSignal;
  runId: string;
  fixedTokens: number | (() => number);
}

/**
 * Threshold path, at the start of a turn: compacts when the request about to be
 * built from `context` is estimated above `contextWindow - reserveTokens`.
 * Returns whether a compaction entry was appended: `false` at once (no promise) in
 * the usual case of a context under the threshold, so a turn pays no await for it.
 */
export function compactBeforeRequest(
  host: OperationHost,
  context: SessionContext,
  auto: AutoCompaction,
): false | Promise<boolean> {
  const settings = host.compactionSettings();
  if (!settings.enabled) return false;
  const threshold = compactionThreshold(auto.model, settings);
  if (threshold === undefined || contextTokens(context, auto.fixedTokens) <= threshold) return false;
  return autoCompact(host, "threshold", auto);
}

/**
 * Overflow path, after a turn ended in a provider error: compacts when pi-ai
 * recognises the error as a context overflow. Returns whether a compaction
 * entry was appended (then the turn is worth repeating).
 */
export async function compactAfterOverflow(
  host: OperationHost,
  message: AssistantMessage,
  auto: AutoCompaction,
): Promise<boolean> {
  if (!host.compactionSettings().enabled) return false;
  if (!isContextOverflow(message, auto.model.contextWindow)) return false;
  return autoCompact(host, "overflow", auto);
}

/**
 * A failed summary (code `compaction`) does not fail the run: `compaction_end`
 * says why and the run goes on uncompacted. Hook failures, aborts and session
 * errors do.
 */
async function autoCompact(host: OperationHost, reason: CompactionReason, auto: AutoCompaction) {
  try {
    const outcome = await runCompaction(host, {
      reason,
      signal: auto.signal,
      runId: auto.runId,
      fixedTokens: auto.fixedTokens,
    });
    return outcome.status === "done";
  } catch (error) {
    if (isHarnessError(error, "compaction")) return false;
    throw error;
  }
}

/** A summary written by the model, within the model's window, with the run's retry policy. */
export function modelSummary(
  host: OperationHost,
  kind: SummaryKind,
  messages: readonly AgentMessage[],
  previousSummary: string | undefined,
  request: { signal: AbortSignal; runId?: string | undefined; instructions?: string | undefined },
): Promise<string> {
  const model = host.model();
  const settings = host.compactionSettings();
  return summarize({
    kind,
    model,
    messages,
    previousSummary,
    instructions: request.instructions,
    inputBudget: compactionThreshold(model, settings),
    maxTokens: summaryMaxTokens(model, settings),
    signal: request.signal,
    streamFn: host.streamFn(),
    requestOptions: host.requestOptions(),
    retry: host.retryPolicy(),
    onRetry: (info) =>
      host.emit({
        type: "retry",
        operation: "summary",
        ...info,
        ...(request.runId === undefined ? {} : { runId: request.runId }),
      }),
  });
}

function previousFiles(details: unknown): string[] {
  const files = (details as Partial<CompactionDetails> | undefined)?.filesTouched;
  return Array.isArray(files) ? files.filter((file): file is string => typeof file === "string") : [];
}

export function abortError(signal: AbortSignal, cause?: unknown): HarnessError {
  const reason: unknown = signal.reason;
  const message = isHarnessError(reason, "aborted") ? reason.message : "aborted";
  return new HarnessError(HarnessErrorCode.aborted, message, cause === undefined ? {} : { cause });
}
