/**
 * Executes one assistant message's tool calls.
 *
 * Invariants: every tool call gets exactly one result message, emitted in call
 * order; a call is validated against the turn's own tool definitions (invalid
 * arguments become an error result the model can read); every refusal, the
 * harness's own included (unknown tool, invalid arguments), is a `tool_decision`
 * event; `tool_execution_start` / `_end` bracket only calls that really execute,
 * so a denied call never gets them; parallel tools run together, a `sequential`
 * tool runs alone; calls are decided one by one in call order, all before the
 * first executes; once the run is stopped (`signal`: a person's abort or a
 * plugin's `stopRun`) no further call is decided - each is refused, with the
 * stop's reason when it was a plugin's stop - and once the person aborts
 * (`executionSignal`) no further call starts (not from a gate tap that aborted,
 * not between two sequential calls). A plugin's stop never cancels a call a gate
 * already allowed: it runs, with the execution signal, to its end. A failure of the
 * caller's hooks never leaves a call without a result: it is recorded and
 * returned as `failure`, and calls planned after it are not executed. The one
 * exception to "a result for every call": a call planned `park` waits for a person,
 * so it and the calls after it get no result now (they are not even decided); the
 * calls before it run as usual and the outcome says `parked`.
 */
import type { JsonValue, ToolCall } from "@earendil-works/pi-ai";
import { describeError } from "../errors.js";
import type { HarnessEvent } from "../events/event-types.js";
import type { ToolCallView, ToolResultPayload } from "../hooks/hook-types.js";
import type { PluginDriver } from "../hooks/plugin-driver.js";
import type { AssistantMessage, DecisionRecord, RecordedToolResult } from "../session/entries.js";
import { type AnyAgentTool, failureText, type ToolResult, toolAuthor, viewToolCall } from "../tools.js";
import { toolArgs, validatedArgs } from "./frozen-args.js";
import type { AgentLoopConfig, LoopTurn, ToolCallPlan } from "./loop-types.js";

export interface ToolCallsOutcome {
  results: RecordedToolResult[];
  /** A hook failure that fails the run once the results are recorded. */
  failure?: unknown;
  /** A call was parked: it and the calls after it have no result yet. */
  parked?: true;
}

interface PlannedCall {
  call: ToolCall;
  tool: AnyAgentTool | undefined;
  plan: DecidedPlan;
}

const HARNESS = "harness";
/** Who refuses the calls left undecided when a plugin stopped the run (`stopRun`). */
export const STOPPED_DECIDER = "harness:stopped";
const NOT_STARTED_ABORTED = "not executed: the run was aborted before this call started";

/** The reason the run's signal was aborted with (`abort(reason)` / `stopRun(reason)`). */
const stopReason = (signal: AbortSignal): string =>
  signal.reason instanceof Error ? signal.reason.message : "the run was stopped";

type DecidedPlan = Exclude<ToolCallPlan, { action: "park" }>;

const refuse = (text: string, decision?: DecisionRecord): DecidedPlan => ({
  action: "refuse",
  result: { content: [{ type: "text", text }], isError: true },
  decision,
});

export async function runToolCalls(
  assistant: AssistantMessage,
  turn: LoopTurn,
  config: AgentLoopConfig,
  signal: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
  driver: PluginDriver,
): Promise<ToolCallsOutcome> {
  const calls = assistant.content.filter((block): block is ToolCall => block.type === "toolCall");
  // Only a person's abort cancels an allowed call; standalone, one signal does both.
  const execution = config.executionSignal ?? signal;
  let failure: unknown;
  let parked = false;
  const planned: PlannedCall[] = [];
  for (const call of calls) {
    const tool = turn.tools.find((candidate) => candidate.name === call.name);
    if (failure !== undefined) {
      planned.push({ call, tool, plan: refuse(`not executed: ${describeError(failure)}`) });
      continue;
    }
    if (execution.aborted) {
      planned.push({ call, tool, plan: refuse(NOT_STARTED_ABORTED) });
      continue;
    }
    if (signal.aborted) {
      // A plugin stopped the run (e.g. a budget): the calls after are not decided, and not run.
      planned.push({ call, tool, plan: await refuseStopped(call, signal, emit) });
      continue;
    }
    try {
      const plan = await planCall(call, tool, turn, config, signal, emit, driver);
      if (plan.action === "park") {
        parked = true;
        break; // the calls after it are decided when the run resumes
      }
      planned.push({ call, tool, plan });
    } catch (error) {
      failure = error;
      planned.push({ call, tool, plan: refuse(`not executed: ${describeError(error)}`) });
    }
  }

  const finals = await executePlanned(planned, turn, config, execution, emit, driver, (error) => {
    failure ??= error;
  });

  const results: RecordedToolResult[] = [];
  for (const [index, { call, plan }] of planned.entries()) {
    const final = finals[index] as ToolResultPayload;
    const message: RecordedToolResult = {
      role: "toolResult",
      toolCallId: call.id,
      toolName: call.name,
      content: final.content,
      // Persisted as JSON, so details are JSON by contract (pi-ai types them so).
      details: final.details as JsonValue,
      isError: final.isError,
      timestamp: Date.now(),
    };
    if (plan.decision) message.decision = plan.decision;
    results.push(message);
    await emit({ type: "message_start", message });
    await emit({ type: "message_end", message });
  }
  const outcome: ToolCallsOutcome = failure === undefined ? { results } : { results, failure };
  if (parked) outcome.parked = true;
  return outcome;
}

/** A refusal the loop decides itself, recorded like any gate's (`tool_decision`). */
async function refuseWith(
  call: ToolCall,
  emit: (event: HarnessEvent) => Promise<void>,
  decision: DecisionRecord,
  text: string,
): Promise<DecidedPlan> {
  await emit({
    type: "tool_decision",
    toolCallId: call.id,
    toolName: call.name,
    args: call.arguments,
    ...decision,
  });
  return refuse(text, decision);
}

function refuseStopped(
  call: ToolCall,
  signal: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
): Promise<DecidedPlan> {
  const reason = stopReason(signal);
  const decision: DecisionRecord = { decision: "deny", by: STOPPED_DECIDER, reason };
  return refuseWith(call, emit, decision, `not executed: the run was stopped (${reason})`);
}

async function planCall(
  call: ToolCall,
  tool: AnyAgentTool | undefined,
  turn: LoopTurn,
  config: AgentLoopConfig,
  signal: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
  driver: PluginDriver,
): Promise<ToolCallPlan> {
  // The harness's own refusals are decisions too: audit logs them like any gate's.
  const refuseAs = (text: string, reason: string) =>
    refuseWith(call, emit, { decision: "deny", by: HARNESS, reason }, text);
  if (!tool) {
    const available = turn.tools.map((t) => t.name).join(", ") || "none";
    return refuseAs(
      `Tool "${call.name}" is not available in this turn (available: ${available}).`,
      "unknown tool",
    );
  }
  let args: Record<string, unknown>;
  try {
    args = validatedArgs(tool, call);
  } catch (error) {
    return refuseAs(describeError(error), "invalid arguments");
  }
  if (config.planToolCall) return config.planToolCall(call, tool, args, turn);
  // Used alone, the loop still hands `execute` the facts its tool declares.
  try {
    const place = { cwd: turn.cwd ?? process.cwd(), sessionId: turn.sessionId ?? "" };
    const view = await viewToolCall(driver, tool, call.id, args, { place, signal, timeoutMs: undefined });
    return { action: "execute", view };
  } catch (error) {
    return refuse(`could not inspect the arguments: ${failureText(error)}`, {
      decision: "deny",
      by: "harness",
      reason: "arguments could not be inspected",
    });
  }
}

/** Runs the decided calls; `execution` is the signal running tools get (a person's abort). */
async function executePlanned(
  planned: PlannedCall[],
  turn: LoopTurn,
  config: AgentLoopConfig,
  execution: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
  driver: PluginDriver,
  onFailure: (error: unknown) => void,
): Promise<ToolResultPayload[]> {
  const finals: Promise<ToolResultPayload>[] = [];
  let inFlight: Promise<unknown>[] = [];
  for (const entry of planned) {
    const sequential = entry.tool?.executionMode === "sequential" && entry.plan.action === "execute";
    if (sequential) {
      await Promise.allSettled(inFlight);
      inFlight = [];
    }
    // Checked right before each start: a person's abort (during a gate tap or an earlier call) stops the rest.
    if (entry.plan.action === "execute" && execution.aborted) {
      entry.plan = refuse(NOT_STARTED_ABORTED, entry.plan.decision);
    }
    const final = completeCall(entry, turn, config, execution, emit, driver, onFailure);
    finals.push(final);
    if (sequential) await final.catch(() => undefined);
    else inFlight.push(final);
  }
  return Promise.all(finals);
}

/** Executes (or refuses) one call, finalizes its result and reports its end. Never rejects. */
async function completeCall(
  { call, tool, plan }: PlannedCall,
  turn: LoopTurn,
  config: AgentLoopConfig,
  signal: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
  driver: PluginDriver,
  onFailure: (error: unknown) => void,
): Promise<ToolResultPayload> {
  if (plan.action === "refuse" || !tool) {
    const raw = plan.action === "refuse" ? plan.result : { content: [], isError: true };
    return { content: raw.content, details: raw.details, isError: raw.isError === true };
  }
  const view = plan.view;
  await emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: view.args });
  const raw = await execute(tool, view, turn, config, signal, emit, driver, onFailure);
  let final: ToolResultPayload = {
    content: raw.content,
    details: raw.details,
    isError: raw.isError === true,
  };
  if (config.finalizeToolResult) {
    try {
      final = await config.finalizeToolResult(view, final, turn);
    } catch (error) {
      onFailure(error);
      // Never let an unfinalized result through: a failing redaction must not leak.
      final = {
        content: [{ type: "text", text: `result withheld: ${describeError(error)}` }],
        isError: true,
      };
    }
  }
  await emit({
    type: "tool_execution_end",
    toolCallId: call.id,
    toolName: call.name,
    result: final,
    isError: final.isError,
  });
  return final;
}

async function execute(
  tool: AnyAgentTool,
  call: ToolCallView,
  turn: LoopTurn,
  config: AgentLoopConfig,
  signal: AbortSignal,
  emit: (event: HarnessEvent) => Promise<void>,
  driver: PluginDriver,
  onFailure: (error: unknown) => void,
): Promise<ToolResult> {
  let done = false;
  // Updates pass `finalizeToolUpdate` one after another, in the order the tool sent them,
  // and all are emitted before the call's `tool_execution_end`.
  // Created by the first update: a call without updates has nothing to wait for at its end.
  let updates: Promise<void> | undefined;
  let withheld = false;
  const finalize = config.finalizeToolUpdate;
  const publish = async (partial: ToolResult) => {
    if (withheld) return;
    let payload: ToolResult = partial;
    if (finalize) {
      try {
        payload = await finalize(
          call,
          { content: partial.content, details: partial.details, isError: partial.isError === true },
          turn,
        );
      } catch (error) {
        // A failing redaction must not leak: this and every later update are withheld.
        withheld = true;
        onFailure(error);
        return;
      }
    }
    await emit({ type: "tool_execution_update", toolCallId: call.id, toolName: call.name, partial: payload });
  };
  const context = {
    signal,
    cwd: turn.cwd ?? process.cwd(),
    sessionId: turn.sessionId ?? "",
    toolCallId: call.id,
    facts: call.facts,
    update: (partial: ToolResult) => {
      if (done || !partial || !Array.isArray(partial.content)) return;
      updates = (updates ?? Promise.resolve()).then(() => publish(partial)).catch(() => undefined);
    },
  };
  // The tool gets a mutable copy of the decided arguments.
  const args = toolArgs(call.args);
  try {
    const result = config.executeTool
      ? await config.executeTool(tool, args, context)
      : await driver.run<ToolResult>(
          { plugin: toolAuthor(tool), hook: "execute", toolCallId: call.id },
          {}, // as in a harness run: the tool gets the signal and answers for itself
          tool.execute,
          tool,
          args,
          context,
        );
    if (!result || !Array.isArray(result.content)) {
      return { content: [{ type: "text", text: `Tool "${tool.name}" returned no content.` }], isError: true };
    }
    return result;
  } catch (error) {
    return { content: [{ type: "text", text: failureText(error) }], isError: true };
  } finally {
    done = true;
    if (updates !== undefined) await updates;
  }
}
