/**
 * One run of the harness (spec "One run"): `beforeRun`, the loop wired to the
 * harness (snapshots, dispatch, tool decisions and execution, stop and retry
 * decisions), and the run's outcome. The harness hands it a `RunPort`; this
 * module never touches the harness object itself.
 *
 * Invariants: every turn runs from a snapshot built from the session plus the
 * live config at turn start (the system prompt resolved once per turn: the
 * first turn reuses the prompt `beforeRun` saw); a message is persisted (stored,
 * on an asynchronous storage) before any listener sees its `message_end`; pending writes flush at the save point
 * after the `turn_end` listeners; tool code runs through the plugin driver and
 * its start and end are journaled around it.
 */
import { estimateFixedTokens } from "../compaction/token-estimate.js";
import { HarnessError, isHarnessError } from "../errors.js";
import type { HarnessEvent, ParkedCall, RunOutcome } from "../events/event-types.js";
import type { PluginDriver } from "../hooks/plugin-driver.js";
import { shortId } from "../ids.js";
import { runAgentLoop } from "../loop/agent-loop.js";
import type {
  AgentLoopConfig,
  LoopResult,
  LoopTurn,
  StreamFunction,
  ToolCallPlan,
} from "../loop/loop-types.js";
import type { RetryPolicy } from "../loop/retry.js";
import { narrowTools } from "../resources/invocation.js";
import type { SkillResource } from "../resources/resource-types.js";
import type { AgentMessage, JournalRecord } from "../session/entries.js";
import {
  type AnyAgentTool,
  failureText,
  type ToolExecutionContext,
  type ToolResult,
  toolAuthor,
} from "../tools.js";
import { compactAfterOverflow, compactBeforeRequest, type OperationHost } from "./compaction-run.js";
import type { HookCalls } from "./hook-calls.js";
import { activeTools, type LiveConfig, resolveSystemPrompt } from "./live-config.js";
import { toUserMessage } from "./message-queues.js";
import { answerParkedCall, parkCall, type ResumeState } from "./parked-calls.js";
import { checkRunOptions, type RunOptions } from "./prompt-input.js";
import type { QueueLedger } from "./queue-ledger.js";
import type { SessionWriter } from "./session-writer.js";
import { type DecisionEnvironment, type DecisionOverrides, decideToolCall } from "./tool-decisions.js";
import type { TurnSnapshot } from "./turn-snapshot.js";

export interface ActiveRun {
  runId: string;
  /** Aborted to end the run: by a person's `abort()` or a plugin's `stopRun()`. */
  controller: AbortController;
  /** Aborted only by a person's `abort()`: what allowed tool calls run under. */
  execution: AbortController;
  turnId: string | undefined;
  snapshot: TurnSnapshot | undefined;
  /** Set when `beforeRun` rewrote the system prompt: it holds for the whole run. */
  systemPromptOverride: string | undefined;
  /** The prompt `beforeRun` saw: the first turn's snapshot uses it instead of resolving again. */
  resolvedPrompt: string | undefined;
  /** An overflow compaction happened since the last successful assistant message (at most one per turn). */
  overflowCompacted: boolean;
  /** Calls this run parked, in call order. */
  parked?: ParkedCall[];
  /** Skills active in this run, in activation order: from the next turn on, they narrow its tools. */
  skills: SkillResource[];
  /** `RunOptions.stopAfterTools`, as recorded in the run's `run_start`. */
  stopAfterTools: boolean;
}

/** A new run; `options` are checked first (`invalid_argument` naming the bad one). */
export const newRun = (options: RunOptions = {}): ActiveRun => ({
  ...checkRunOptions(options),
  runId: shortId(),
  controller: new AbortController(),
  execution: new AbortController(),
  turnId: undefined,
  snapshot: undefined,
  systemPromptOverride: undefined,
  resolvedPrompt: undefined,
  overflowCompacted: false,
  skills: [],
  stopAfterTools: options.stopAfterTools === true,
});

/** A run's `run_start` journal record: its id and the options it runs with. */
export const runStartRecord = (run: ActiveRun): JournalRecord =>
  run.stopAfterTools
    ? { event: "run_start", runId: run.runId, stopAfterTools: true }
    : { event: "run_start", runId: run.runId };

/** What a run does once started (the harness journals its start and settles it). */
export type RunBody = (run: ActiveRun) => Promise<RunOutcome>;

/** What a run needs of its harness. */
export interface RunPort {
  readonly calls: HookCalls;
  readonly config: LiveConfig;
  readonly ledger: QueueLedger;
  readonly writer: SessionWriter;
  readonly driver: PluginDriver;
  readonly operations: OperationHost;
  /** How this harness decides tool calls, under `signal` (the same environment `evaluateToolCall` gets). */
  decisionEnvironment(signal: AbortSignal, overrides: DecisionOverrides): DecisionEnvironment;
  streamFn(): StreamFunction;
  retryPolicy(): RetryPolicy | undefined;
  maxStopContinuations(): number;
  /** Delivers an event to listeners (in order); resolves when they all ran. */
  emit(event: HarnessEvent): Promise<void>;
}

export async function executeRun(port: RunPort, run: ActiveRun, prompt: AgentMessage): Promise<RunOutcome> {
  const { config, ledger, writer, calls } = port;
  writer.recordConfigDrift({
    model: config.model,
    thinkingLevel: config.thinkingLevel,
    activeToolNames: config.activeToolNames ?? config.tools.map((tool) => tool.name),
  });
  const signal = run.controller.signal;
  const nextTurn = ledger.take("nextTurn");
  let start: { systemPrompt: string; messages: AgentMessage[]; block?: { reason: string } };
  let systemPrompt: string;
  try {
    systemPrompt = await resolveSystemPrompt(config);
    const messages = [...nextTurn.map((item) => item.message), prompt];
    start = await calls.waterfall("beforeRun", { systemPrompt, messages }, signal);
  } catch (error) {
    ledger.putBack("nextTurn", nextTurn);
    // A beforeRun tap still waiting when the run was aborted: the run is aborted, not failed.
    if (signal.aborted && isHarnessError(error, "aborted")) {
      return { runId: run.runId, status: "aborted", reason: error.message, messages: [] };
    }
    throw error;
  }
  if (start.block) {
    ledger.putBack("nextTurn", nextTurn);
    return { runId: run.runId, status: "blocked", reason: start.block.reason, messages: [] };
  }
  // Queued messages a tap replaced or dropped were consumed by it: the run's first
  // persisted message records their ids, in the same line.
  const injected = new Set(start.messages);
  ledger.consumed(nextTurn.filter((item) => !injected.has(item.message)));
  if (start.systemPrompt !== systemPrompt) run.systemPromptOverride = start.systemPrompt;
  else run.resolvedPrompt = systemPrompt;

  return outcomeOf(run, await runAgentLoop(start.messages, loopConfig(port, run)));
}

/**
 * Continues a parked run: the first turn answers the parked message's open calls - an
 * approved one executes exactly the parked arguments (its hash checked again; `toolCall`
 * and `toolGate` are not asked again: the person's verdict stands), a denied one gets the
 * person's reason as its error result, a call never decided goes through the gates now -
 * and the run goes on as usual.
 */
export async function executeResume(port: RunPort, run: ActiveRun, plan: ResumeState): Promise<RunOutcome> {
  const { config: live } = port;
  port.writer.recordConfigDrift({
    model: live.model,
    thinkingLevel: live.thinkingLevel,
    activeToolNames: live.activeToolNames ?? live.tools.map((tool) => tool.name),
  });
  const config = loopConfig(port, run);
  const decide = config.planToolCall as NonNullable<AgentLoopConfig["planToolCall"]>;
  config.planToolCall = (call, tool, args, turn) => {
    const answer = plan.answers.get(call.id);
    if (answer === undefined) return decide(call, tool, args, turn);
    const { driver, signal, timeoutMs } = port.decisionEnvironment(run.controller.signal, {});
    const place = { cwd: turn.cwd ?? process.cwd(), sessionId: turn.sessionId ?? "" };
    return answerParkedCall(answer, call, tool, driver, { place, signal, timeoutMs: timeoutMs() }, (event) =>
      dispatch(port, run, event),
    );
  };
  config.resume = { message: plan.message, openCallIds: plan.openCallIds };
  return outcomeOf(run, await runAgentLoop([], config));
}

function outcomeOf(run: ActiveRun, result: LoopResult): RunOutcome {
  const signal = run.controller.signal;
  if (result.status === "error" && result.error instanceof HarnessError) throw result.error;
  const outcome: RunOutcome = { runId: run.runId, status: result.status, messages: result.messages };
  if (result.status === "parked") outcome.parked = run.parked ?? [];
  if (result.error !== undefined)
    outcome.reason = result.error instanceof Error ? result.error.message : String(result.error);
  else if (result.status === "aborted" && signal.reason instanceof HarnessError)
    outcome.reason = signal.reason.message; // `abort(reason)` or a plugin's `stopRun(reason)`
  return outcome;
}

function loopConfig(port: RunPort, run: ActiveRun): AgentLoopConfig {
  const { calls } = port;
  const signal = run.controller.signal;
  // One decision environment per turn (its place is the turn's), not one per tool call.
  let environment: { turn: LoopTurn; env: DecisionEnvironment } | undefined;
  const decisionEnvironment = (turn: LoopTurn): DecisionEnvironment => {
    if (environment?.turn === turn) return environment.env;
    const env: DecisionEnvironment = port.decisionEnvironment(signal, {
      emit: (event) => dispatch(port, run, event),
      place: { cwd: turn.cwd ?? process.cwd(), sessionId: turn.sessionId ?? "" },
      onUnanswered: () => port.config.onUnanswered,
    });
    environment = { turn, env };
    return env;
  };
  // Finishing an allowed call (its result and update taps) is cancelled only by a person's abort.
  const execution = run.execution.signal;
  const config: AgentLoopConfig = {
    runId: run.runId,
    ...(run.stopAfterTools ? { stopAfterTools: true } : {}),
    streamFn: port.streamFn(),
    signal,
    executionSignal: execution,
    emit: (event) => dispatch(port, run, event),
    prepareTurn: () => takeSnapshot(port, run),
    retry: () => port.retryPolicy(),
    recoverTurn: async (message, turn) => {
      if (run.overflowCompacted) return false;
      const compacted = await compactAfterOverflow(port.operations, message, {
        model: turn.model,
        signal,
        runId: run.runId,
        fixedTokens: () => estimateFixedTokens(turn.systemPrompt, turn.tools),
      });
      if (compacted) run.overflowCompacted = true;
      return compacted;
    },
    takeSteering: () => port.ledger.take("steer").map((item) => item.message),
    takeFollowUp: () => port.ledger.take("followUp").map((item) => item.message),
    planToolCall: async (call, tool, args, turn): Promise<ToolCallPlan> => {
      const plan = await decideToolCall(decisionEnvironment(turn), call, tool, args, {
        trail: port.config.decisionTrail,
      });
      if (plan.action !== "park") return plan;
      const parked = await parkCall(port.writer, run.runId, call, plan, (event) =>
        dispatch(port, run, event),
      );
      run.parked = [...(run.parked ?? []), parked];
      return plan;
    },
    executeTool: (tool, args, context) => executeTool(port, run, tool, args, context),
    beforeStop: async (last, continuations) => {
      if (continuations >= port.maxStopContinuations()) return undefined;
      const answer = await calls.bail("beforeStop", { lastMessage: last, continuations }, signal);
      if (answer?.decision !== "continue") return undefined;
      return [toUserMessage(answer.message)];
    },
  };
  // A hook nobody tapped costs nothing per turn: its loop callback is left out.
  if (calls.tapped("beforeRequest")) {
    config.beforeRequest = (_turn, request) => calls.waterfall("beforeRequest", request, signal);
  }
  if (calls.tapped("providerPayload")) {
    config.onPayload = (payload) => calls.waterfall("providerPayload", payload, signal);
  }
  if (calls.tapped("toolResult")) {
    config.finalizeToolResult = (view, result) => calls.waterfall("toolResult", result, execution, view);
  }
  if (calls.tapped("toolUpdate")) {
    config.finalizeToolUpdate = (view, partial) => calls.waterfall("toolUpdate", partial, execution, view);
  }
  if (calls.tapped("beforeRetry")) {
    config.beforeRetry = (request) => calls.bail("beforeRetry", request, signal);
  }
  return config;
}

/**
 * Persist before broadcast; flush pending writes at the save point after `turn_end` listeners.
 * Not `async`: an event with nothing to wait for goes straight to `emit`, without a
 * promise and microtask hop of its own (most events of a turn); a failed write still
 * surfaces as a rejection, as from an async function.
 */
function dispatch(port: RunPort, run: ActiveRun, event: HarnessEvent): Promise<void> {
  try {
    persist(port, run, event);
  } catch (error) {
    return Promise.reject(error);
  }
  const stored = port.writer.stored(); // only an asynchronous storage leaves writes in flight
  if (stored !== undefined || event.type === "turn_end") return broadcast(port, run, event, stored);
  return port.emit(event);
}

async function broadcast(
  port: RunPort,
  run: ActiveRun,
  event: HarnessEvent,
  stored: Promise<void> | undefined,
): Promise<void> {
  if (stored) await stored;
  await port.emit(event);
  if (event.type === "turn_end") {
    run.snapshot = undefined;
    await port.writer.savePoint();
  }
}

function persist(port: RunPort, run: ActiveRun, event: HarnessEvent): void {
  const { writer } = port;
  if (event.type === "message_end") {
    const { message } = event;
    const queueIds = port.ledger.persisting(message);
    writer.session.appendMessage(message, queueIds === undefined ? {} : { queueIds });
    if (message.role === "assistant" && message.stopReason !== "error") {
      run.overflowCompacted = false; // the turn got through: a later overflow may compact again
    }
  } else if (event.type === "turn_start") {
    run.turnId = event.turnId;
    writer.journal({ event: "turn_start", runId: event.runId, turnId: event.turnId });
  } else if (event.type === "turn_end") {
    writer.journal({ event: "turn_end", runId: event.runId, turnId: event.turnId });
  }
}

async function takeSnapshot(port: RunPort, run: ActiveRun): Promise<TurnSnapshot> {
  const { config, writer } = port;
  const model = config.model;
  const tools = narrowTools(activeTools(config), run.skills);
  // Resolved once per turn; the first turn reuses what `beforeRun` saw.
  const source = config.systemPrompt;
  const systemPrompt =
    run.systemPromptOverride ??
    run.resolvedPrompt ??
    (typeof source === "string" ? source : await resolveSystemPrompt(config));
  run.resolvedPrompt = undefined;
  const session = writer.session;
  let context = session.buildContext();
  // Auto-compaction, threshold path: the compaction entry is the harness's own structural
  // write at a turn boundary (before this turn's request), appended directly, not pending.
  const compacted = compactBeforeRequest(port.operations, context, {
    model,
    signal: run.controller.signal,
    runId: run.runId,
    fixedTokens: () => estimateFixedTokens(systemPrompt, tools),
  });
  if (compacted !== false && (await compacted)) context = session.buildContext();
  const snapshot: TurnSnapshot = {
    runId: run.runId,
    turnId: run.turnId ?? "",
    model,
    systemPrompt,
    messages: context.messages,
    tools,
    allTools: config.tools,
    activeToolNames: tools.map((tool) => tool.name),
    thinkingLevel: config.thinkingLevel,
    requestOptions: { ...config.requestOptions },
    resources: config.resources,
    skills: config.skills,
    templates: config.templates,
    activeSkills: run.skills.map((skill) => skill.name),
    sessionId: session.id,
    cwd: config.cwd,
  };
  run.snapshot = snapshot;
  return snapshot;
}

async function executeTool(
  port: RunPort,
  run: ActiveRun,
  tool: AnyAgentTool,
  args: Record<string, unknown>,
  context: ToolExecutionContext,
): Promise<ToolResult> {
  const site = { runId: run.runId, toolCallId: context.toolCallId, toolName: tool.name };
  // Journaled before the tool can have any effect: recovery then knows it may have run.
  port.writer.journal({ event: "tool_start", ...site });
  const stored = port.writer.stored();
  if (stored) await stored;
  let result: ToolResult;
  try {
    result = await port.driver.run<ToolResult>(
      { plugin: toolAuthor(tool), hook: "execute", toolCallId: context.toolCallId },
      {},
      tool.execute,
      tool,
      args,
      context,
    );
  } catch (error) {
    // A tool failure is a result the model can read, in the tool's own words.
    result = { content: [{ type: "text" as const, text: failureText(error) }], isError: true };
  }
  port.writer.journalQuietly({ event: "tool_end", ...site, isError: result?.isError === true });
  return result;
}
