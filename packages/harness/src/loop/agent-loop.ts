/**
 * `runAgentLoop`: the model-tool loop, usable on its own or driven by AgentHarness.
 *
 * Invariants: every turn is closed (`turn_start` ... `turn_end`), every run is
 * closed (`agent_start` ... `agent_end`), and every failure - provider error,
 * abort, a hook that throws - ends as a closed assistant message rather than an
 * exception in the middle of a turn. Steering is polled after each turn,
 * follow-ups only when the run would stop, and both once more after `beforeStop`
 * (a tap may have queued one). Drained queue messages are emitted
 * (and so persisted by the harness) before anything else can fail or abort.
 * Transient provider errors are retried inside the turn (`config.retry`); a turn
 * that still ended in a provider error is closed first, and only then may
 * `config.recoverTurn` ask for a fresh turn repeating the request. A turn whose
 * tool calls parked ends the run `parked` once the turn is closed; a resumed run
 * (`config.resume`) starts with a turn that answers the parked message's open
 * calls instead of requesting a new reply.
 */
import { describeError, isHarnessError } from "../errors.js";
import type { HarnessEvent } from "../events/event-types.js";
import { PluginDriver } from "../hooks/plugin-driver.js";
import { shortId } from "../ids.js";
import { streamThrough } from "../models/builtin-models.js";
import type { AgentMessage, AssistantMessage, RecordedToolResult } from "../session/entries.js";
import type { AgentLoopConfig, LoopConfig, LoopResult, LoopTurn } from "./loop-types.js";
import { failureMessage, requestAssistant } from "./stream-assistant.js";
import { runToolCalls } from "./tool-calls.js";

export async function runAgentLoop(prompts: AgentMessage[], given: AgentLoopConfig): Promise<LoopResult> {
  const config: LoopConfig = given.streamFn
    ? (given as LoopConfig)
    : { ...given, streamFn: streamThrough(undefined) };
  const runId = config.runId ?? shortId();
  const signal = config.signal ?? new AbortController().signal;
  // Standalone, the loop calls tools itself: through a driver of its own (a harness passes `executeTool`).
  const driver = new PluginDriver();
  const produced: AgentMessage[] = [];
  /** Tool calls whose result message was delivered (persisted, for the harness). */
  const answered = new Set<string>();
  // Not `async`: most events pass straight through to `config.emit`, with no promise of their own.
  const emit = (event: HarnessEvent): Promise<void> => {
    let delivered: Promise<void> | undefined;
    try {
      if (event.type === "message_end") produced.push(event.message);
      delivered = config.emit?.(event) as Promise<void> | undefined;
    } catch (error) {
      return Promise.reject(error);
    }
    if (event.type === "message_end" && event.message.role === "toolResult") {
      const { toolCallId } = event.message;
      return Promise.resolve(delivered).then(() => {
        answered.add(toolCallId);
      });
    }
    return delivered ?? Promise.resolve();
  };
  const prepareTurn = config.prepareTurn ?? standaloneTurns(config, produced);

  let status: LoopResult["status"] = "completed";
  let error: unknown;
  let turn: LoopTurn | undefined;
  let turnOpen: { turnId: string; closed: boolean; reply?: AssistantMessage } | undefined;
  let turnIndex = 0;
  let resuming = config.resume;

  try {
    await emit({ type: "agent_start", runId });
    for (const message of prompts) await emitMessage(emit, message);

    let pending: AgentMessage[] = [];
    let continuations = 0;
    let last: AssistantMessage | undefined;
    run: while (true) {
      let hasToolResults = true;
      let recovering = false;
      while (hasToolResults || recovering || pending.length > 0) {
        recovering = false;
        const turnId = shortId();
        turnOpen = { turnId, closed: false };
        await emit({ type: "turn_start", runId, turnId, turnIndex: turnIndex++ });
        for (const message of pending) await emitMessage(emit, message);
        pending = [];

        turn = await prepareTurn();
        const streamed = resuming
          ? { message: resuming.message }
          : await requestAssistant(turn, config, signal, emit, runId);
        last = streamed.message;
        turnOpen.reply = last;
        if (
          streamed.hookFailure !== undefined ||
          last.stopReason === "error" ||
          last.stopReason === "aborted"
        ) {
          await closeTurn(emit, runId, turnOpen, last, []);
          if (
            streamed.hookFailure === undefined &&
            last.stopReason === "error" &&
            !signal.aborted &&
            config.recoverTurn &&
            (await config.recoverTurn(last, turn))
          ) {
            recovering = true;
            hasToolResults = false;
            pending = config.takeSteering?.() ?? [];
            continue;
          }
          if (streamed.hookFailure !== undefined) {
            status = "error";
            error = streamed.hookFailure;
          } else {
            status = last.stopReason === "aborted" || signal.aborted ? "aborted" : "error";
            error =
              last.stopReason === "error" ? new Error(last.errorMessage ?? "provider error") : undefined;
          }
          break run;
        }

        const tools = await runToolCalls(
          resuming ? openPart(resuming) : last,
          turn,
          config,
          signal,
          emit,
          driver,
        );
        resuming = undefined;
        // With stopAfterTools the results are the run's answer: no request for the model to read them.
        hasToolResults = tools.results.length > 0 && config.stopAfterTools !== true;
        if (tools.failure !== undefined) {
          await emitMessage(emit, failureMessage(turn, describeError(tools.failure)));
          await closeTurn(emit, runId, turnOpen, last, tools.results);
          // A tap cancelled by the abort is the abort, not a failure of the run.
          if (signal.aborted && isHarnessError(tools.failure, "aborted")) status = "aborted";
          else {
            status = "error";
            error = tools.failure;
          }
          break run;
        }
        await closeTurn(emit, runId, turnOpen, last, tools.results);
        if (signal.aborted) {
          status = "aborted";
          break run;
        }
        if (tools.parked) {
          status = "parked";
          break run;
        }
        pending = config.takeSteering?.() ?? [];
      }
      const followUps = config.takeFollowUp?.() ?? [];
      if (followUps.length > 0) {
        pending = followUps;
        continue;
      }
      const extra = last && config.beforeStop ? await config.beforeStop(last, continuations) : undefined;
      if (extra && extra.length > 0) {
        continuations++;
        pending = extra;
        continue;
      }
      // Steering or a follow-up queued while `beforeStop` decided (a tap may queue one).
      const late = signal.aborted
        ? []
        : [...(config.takeSteering?.() ?? []), ...(config.takeFollowUp?.() ?? [])];
      if (late.length > 0) {
        pending = late;
        continue;
      }
      break;
    }
  } catch (thrown) {
    // An abort that surfaced as a thrown `aborted` error (e.g. during auto-compaction) is an abort.
    const aborted = signal.aborted && isHarnessError(thrown, "aborted");
    status = aborted ? "aborted" : "error";
    error = thrown;
    await closeAfterFailure(emit, runId, turnOpen, turn, thrown, aborted, answered);
  }
  try {
    await emit({ type: "agent_end", runId, status, messages: produced });
  } catch (thrown) {
    if (error === undefined) {
      status = "error";
      error = thrown;
    }
  }
  return error === undefined
    ? { runId, status, messages: produced }
    : { runId, status, messages: produced, error };
}

/** The parked message with only its still-open tool calls: the ones with results never run again. */
function openPart({ message, openCallIds }: NonNullable<AgentLoopConfig["resume"]>): AssistantMessage {
  const open = new Set(openCallIds);
  return {
    ...message,
    content: message.content.filter((block) => block.type !== "toolCall" || open.has(block.id)),
  };
}

async function emitMessage(emit: (event: HarnessEvent) => Promise<void>, message: AgentMessage) {
  await emit({ type: "message_start", message });
  await emit({ type: "message_end", message });
}

async function closeTurn(
  emit: (event: HarnessEvent) => Promise<void>,
  runId: string,
  open: { turnId: string; closed: boolean },
  message: AssistantMessage,
  toolResults: LoopResultToolResults,
) {
  open.closed = true;
  await emit({ type: "turn_end", runId, turnId: open.turnId, message, toolResults });
}

type LoopResultToolResults = Extract<HarnessEvent, { type: "turn_end" }>["toolResults"];

/**
 * A failure that escaped the turn (preparing it, a request hook, a message that could
 * not be persisted): close the turn with an error message. Tool calls of the turn's
 * reply whose result was never delivered get an error result first, so every call
 * keeps exactly one result.
 */
async function closeAfterFailure(
  emit: (event: HarnessEvent) => Promise<void>,
  runId: string,
  open: { turnId: string; closed: boolean; reply?: AssistantMessage } | undefined,
  turn: LoopTurn | undefined,
  thrown: unknown,
  aborted: boolean,
  answered: ReadonlySet<string>,
) {
  if (!open || open.closed) return;
  const message = failureMessage(turn, describeError(thrown), aborted);
  try {
    const reply = open.reply;
    if (reply && reply.stopReason !== "error" && reply.stopReason !== "aborted") {
      for (const block of reply.content) {
        if (block.type !== "toolCall" || answered.has(block.id)) continue;
        const result: RecordedToolResult = {
          role: "toolResult",
          toolCallId: block.id,
          toolName: block.name,
          content: [{ type: "text", text: `not recorded: ${describeError(thrown)}` }],
          isError: true,
          timestamp: Date.now(),
        };
        await emitMessage(emit, result);
      }
    }
    await emitMessage(emit, message);
    await closeTurn(emit, runId, open, message, []);
  } catch {
    // The emitter itself is failing (e.g. the session cannot be written): nothing more can be recorded.
  }
}

/** Standalone use: the transcript is `context.messages` plus what this run produced. */
function standaloneTurns(config: AgentLoopConfig, produced: AgentMessage[]): () => LoopTurn {
  const context = config.context;
  if (!context) throw new TypeError("runAgentLoop needs either `prepareTurn` or `context`");
  return () => ({ ...context, messages: [...context.messages, ...produced] });
}
