/**
 * One provider call: builds the request from the turn snapshot, streams it, and
 * always returns a closed assistant message (pi-ai turns provider failures and
 * aborts into `stopReason: "error" | "aborted"`).
 */
import type { Context } from "@earendil-works/pi-ai";
import type { HarnessEvent } from "../events/event-types.js";
import type { AssistantMessage, Message } from "../session/entries.js";
import type { LoopConfig, LoopTurn } from "./loop-types.js";
import { isTransientError, retryDelay, sleepUnlessAborted } from "./retry.js";

export interface StreamOutcome {
  message: AssistantMessage;
  /** A hook that failed inside the provider call (payload rewrite); fails the run. */
  hookFailure?: unknown;
}

export async function streamAssistant(
  turn: LoopTurn,
  config: LoopConfig,
  signal: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
): Promise<StreamOutcome> {
  let request = { messages: turn.messages, options: turn.requestOptions };
  if (config.beforeRequest) request = await config.beforeRequest(turn, request);
  if (signal.aborted) {
    // Aborted (or stopped by a tap) before the provider was called: no request is sent.
    const message = failureMessage(turn, "aborted before the request was sent", true);
    await emit({ type: "message_start", message });
    await emit({ type: "message_end", message });
    return { message };
  }

  const context: Context = {
    systemPrompt: turn.systemPrompt,
    messages: request.messages as Message[],
    tools: turn.tools.map(({ name, description, parameters }) => ({ name, description, parameters })),
  };
  let hookFailure: unknown;
  const onPayload = config.onPayload;
  const response = config.streamFn(turn.model, context, {
    ...request.options,
    signal,
    sessionId: turn.sessionId,
    reasoning: turn.thinkingLevel === "off" ? undefined : turn.thinkingLevel,
    onPayload: onPayload
      ? async (payload: unknown) => {
          try {
            return await onPayload(payload, turn);
          } catch (error) {
            hookFailure = error;
            throw error;
          }
        }
      : undefined,
  });

  let started = false;
  for await (const event of response) {
    if (event.type === "start") {
      started = true;
      await emit({ type: "message_start", message: event.partial });
    } else if (event.type === "done" || event.type === "error") {
      break;
    } else {
      const delta = {
        type: event.type,
        contentIndex: event.contentIndex,
        delta: "delta" in event ? event.delta : undefined,
      };
      await emit({ type: "message_update", message: event.partial, delta });
    }
  }
  const message = await response.result();
  if (!started) await emit({ type: "message_start", message });
  await emit({ type: "message_end", message });
  return hookFailure === undefined ? { message } : { message, hookFailure };
}

/**
 * One request of a turn, retried under `config.retry` while it fails
 * transiently. Every attempt's message is closed and emitted (so persisted by
 * the harness: honest history; providers skip error messages when sending),
 * each retry is announced by a `retry` event, and every attempt uses the same
 * turn snapshot. An abort during the backoff ends with a closed `aborted` message.
 */
export async function requestAssistant(
  turn: LoopTurn,
  config: LoopConfig,
  signal: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
  runId: string,
): Promise<StreamOutcome> {
  for (let attempt = 1; ; attempt++) {
    const outcome = await streamAssistant(turn, config, signal, emit);
    const { message } = outcome;
    if (outcome.hookFailure !== undefined || message.stopReason !== "error" || signal.aborted) return outcome;
    const policy = typeof config.retry === "function" ? config.retry() : config.retry;
    if (!policy || attempt >= policy.maxAttempts) return outcome;
    const retryable = policy.isRetryable
      ? policy.isRetryable(message, turn.model)
      : isTransientError(message, turn.model);
    if (!retryable) return outcome;
    let delayMs = retryDelay(policy, attempt);
    if (config.beforeRetry) {
      const request = {
        attempt: attempt + 1,
        maxAttempts: policy.maxAttempts,
        delayMs,
        message,
        errorMessage: message.errorMessage ?? "provider error",
      };
      let decision: Awaited<ReturnType<NonNullable<typeof config.beforeRetry>>>;
      try {
        decision = await config.beforeRetry(request, turn);
      } catch (error) {
        return { message, hookFailure: error };
      }
      if (decision?.decision === "stop") return outcome;
      if (decision?.delayMs !== undefined) delayMs = decision.delayMs;
    }
    await emit({
      type: "retry",
      runId,
      operation: "request",
      attempt: attempt + 1,
      maxAttempts: policy.maxAttempts,
      delayMs,
      errorMessage: message.errorMessage ?? "provider error",
    });
    if (!(await sleepUnlessAborted(delayMs, signal))) {
      const aborted = failureMessage(turn, "aborted while waiting to retry", true);
      await emit({ type: "message_start", message: aborted });
      await emit({ type: "message_end", message: aborted });
      return { message: aborted };
    }
  }
}

/** A closed assistant message for a failure that happened outside the provider. */
export function failureMessage(
  turn: LoopTurn | undefined,
  errorMessage: string,
  aborted = false,
): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: turn?.model.api ?? "unknown",
    provider: turn?.model.provider ?? "unknown",
    model: turn?.model.id ?? "unknown",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: aborted ? "aborted" : "error",
    errorMessage,
    timestamp: Date.now(),
  };
}
