/**
 * How the harness decides one tool call (spec "One run", step 4): the one decision
 * pipeline, for runs and for `evaluateToolCall` in @rein/sdk (no model, no
 * execution, no events), so a verdict seen offline is the one a run records.
 *
 * `toolCall` may rewrite the arguments (validated again); then the call's one view
 * is built (`viewToolCall`: `inspect` through the plugin driver, facts frozen) and
 * is what the gates, `permissionAsk`, `execute` and the result taps see; `toolGate`
 * reduces to the strictest verdict (none: the default, a function of which runs
 * through the driver and fails closed); an `ask` goes to `permissionAsk` (no
 * answer: deny). Invariants: nothing here turns a deny into an allow; the arguments
 * every tap sees are deeply frozen. With `trail`, each tap that ran leaves a step
 * (hook-run.ts); with `explainAfterDeny` (`rein check` only) the same walker asks
 * the gate taps after the deciding deny, as `consulted: false` steps.
 */
import type { JsonObject, ToolCall } from "@earendil-works/pi-ai";
import { describeError, type HarnessError, HarnessErrorCode, pluginFailure } from "../errors.js";
import type { HarnessEvent } from "../events/event-types.js";
import { runBail, runToolGate, runWaterfall } from "../hooks/create-hooks.js";
import type { HarnessHooks } from "../hooks/hook-table.js";
import type {
  AttributedVerdict,
  GateVerdict,
  ToolCallInfo,
  ToolCallView,
  ToolGateCall,
  ToolHookContext,
} from "../hooks/hook-types.js";
import type { PluginDriver } from "../hooks/plugin-driver.js";
import { validatedArgs } from "../loop/frozen-args.js";
import type { ToolCallPlan } from "../loop/loop-types.js";
import type { DecisionRecord, DecisionStep } from "../session/entries.js";
import type { ToolInspectionContext } from "../tools.js";
import { type AnyAgentTool, failureText, type ToolCallFacts, viewToolCall } from "../tools.js";
import type { DefaultToolVerdict } from "./live-config.js";

export interface DecisionEnvironment {
  hooks: HarnessHooks;
  /** The harness's plugin driver: `inspect` and a default-verdict function run through it. */
  driver: Pick<PluginDriver, "run">;
  /** What `inspect` and a default-verdict function wait under: the run's signal, the tap timeout. */
  signal: AbortSignal;
  timeoutMs(): number;
  defaultVerdict(): DefaultToolVerdict;
  /** Who set a default-verdict function (the plugin failures are attributed to); absent: `harness`. */
  defaultVerdictOwner?(): string | undefined;
  contextFor(call: ToolCallInfo): ToolHookContext;
  emit(event: HarnessEvent): Promise<void>;
  /** Where the call is inspected (the turn's cwd and session). */
  place: ToolInspectionContext;
  /** What an `ask` nobody answers becomes: `deny` (default) or `park` (wait for a person). */
  onUnanswered?(): "deny" | "park";
  /** Surfaces a failure absorbed by failing closed (a `plugin_error` event). */
  report?(failure: HarnessError): void;
  /** In a child agent: its path (`task#1 of run r1`), appended to every record's `by`. */
  agentPath?: string;
}

/** What a caller may set: events (none by default), where calls are inspected, what an unanswered `ask` becomes. */
export type DecisionOverrides = Partial<Pick<DecisionEnvironment, "emit" | "place" | "onUnanswered">>;

export const HARNESS_DECIDER = "harness";

export interface DecideOptions {
  /**
   * Validate the call's raw arguments first (the loop does this itself before
   * deciding): arguments that do not match the schema are refused by `harness`.
   */
  validate?: boolean;
  /** Stop at the gate: an `ask` is not put to `permissionAsk` (the plan refuses; `gate` says ask). */
  skipPermission?: boolean;
  /** Collect what every tap said (`DecisionRecord.trail`, `ToolDecision.trail`). Default off: nothing is collected. */
  trail?: boolean;
  /**
   * Explain mode (implies `trail`): after a tap's deny decides the gate, the
   * `toolGate` taps after it are still called - through the same tap call, with
   * their timeouts and failure tagging - and their answers recorded as steps
   * with `consulted: false`. The decision is the one without it. For `rein check`
   * only: those taps run, with whatever side effects they have, on the caller's
   * session; a run never sets it. Default off.
   */
  explainAfterDeny?: boolean;
}

/** A plan with what the decision saw: the final arguments, and the gate's verdict (absent when refused before it). */
export type ToolDecision = ToolCallPlan & {
  args: Record<string, unknown>;
  gate?: AttributedVerdict;
  /** What the tool's `inspect` resolved (absent when refused before inspection). */
  facts?: Readonly<ToolCallFacts>;
  /** With `trail`: every tap's step, in order (also on the decision record). */
  trail?: DecisionStep[];
};

/**
 * The verdict when no gate had an opinion: the configured decision, or what the
 * default-verdict function says (run through the driver like any plugin code; a
 * throw, a timeout or a malformed answer denies, failing closed, and is reported).
 */
async function defaultVerdictFor(env: DecisionEnvironment, call: ToolGateCall): Promise<AttributedVerdict> {
  const source = env.defaultVerdict();
  const by = `${HARNESS_DECIDER}:default`;
  if (typeof source !== "function") {
    return { decision: source, reason: `no gate had an opinion; default is ${source}`, by };
  }
  const plugin = env.defaultVerdictOwner?.() ?? HARNESS_DECIDER;
  const site = { plugin, hook: "defaultToolVerdict", toolCallId: call.id };
  try {
    const verdict = await env.driver.run<GateVerdict>(
      site,
      { signal: env.signal, timeoutMs: env.timeoutMs() },
      source,
      undefined,
      call,
    );
    const decision = (verdict as Partial<GateVerdict> | undefined)?.decision;
    if (decision !== "allow" && decision !== "ask" && decision !== "deny") {
      throw new TypeError(
        `expected { decision: "allow" | "ask" | "deny", reason }, got ${JSON.stringify(verdict)}`,
      );
    }
    return { ...verdict, by };
  } catch (error) {
    const failure = pluginFailure(error, site);
    if (failure.code !== HarnessErrorCode.aborted) env.report?.(failure);
    return {
      decision: "deny",
      by,
      reason: `the default verdict of "${plugin}" failed: ${failureText(error)} (failing closed)`,
    };
  }
}

export function decideToolCall(
  env: DecisionEnvironment,
  call: ToolCall,
  tool: AnyAgentTool,
  checkedArgs: Record<string, unknown>,
  options: DecideOptions = {},
): Promise<ToolDecision> {
  // Without a trail, nothing extra: not even a wrapping promise.
  if (!options.trail && !options.explainAfterDeny)
    return decide(env, call, tool, checkedArgs, options, undefined);
  const trail: DecisionStep[] = [];
  return decide(env, call, tool, checkedArgs, options, trail).then((decided) => {
    decided.trail = trail;
    return decided;
  });
}

async function decide(
  env: DecisionEnvironment,
  call: ToolCall,
  tool: AnyAgentTool,
  checkedArgs: Record<string, unknown>,
  options: DecideOptions,
  trail: DecisionStep[] | undefined,
): Promise<ToolDecision> {
  let args = checkedArgs;
  if (options.validate) {
    try {
      args = validatedArgs(tool, call);
    } catch (error) {
      return refuseWith(
        env,
        call,
        call.arguments,
        trail,
        {
          decision: "deny",
          by: HARNESS_DECIDER,
          reason: "invalid arguments",
        },
        describeError(error),
      );
    }
  }
  if (env.hooks.toolCall.taps.length > 0) {
    const rewritten = await runWaterfall(
      env.hooks,
      "toolCall",
      { id: call.id, name: call.name, args },
      env.contextFor({ id: call.id, name: call.name, args, risk: tool.risk, tool }),
      trail,
    );
    if (rewritten.args !== args) {
      try {
        args = validatedArgs(tool, { ...call, arguments: rewritten.args as JsonObject });
      } catch (error) {
        return refuseWith(env, call, rewritten.args, trail, {
          decision: "deny",
          by: HARNESS_DECIDER,
          reason: `arguments rewritten by a toolCall tap are invalid: ${describeError(error)}`,
        });
      }
    }
  }

  // The one view of the call from here on: gates, permission, execute and result taps all see it.
  let view: ToolCallView;
  try {
    view = await viewToolCall(env.driver, tool, call.id, args, {
      place: env.place,
      signal: env.signal,
      timeoutMs: env.timeoutMs(),
    });
  } catch (error) {
    return refuseWith(env, call, args, trail, {
      decision: "deny",
      by: HARNESS_DECIDER,
      reason: `could not inspect the arguments: ${failureText(error)}`,
    });
  }
  const facts = view.facts;
  const gateCall: ToolGateCall = Object.freeze({
    id: call.id,
    name: call.name,
    args,
    risk: tool.risk,
    facts,
  });
  // Built only when a tap will see it: with no gate taps the default decides alone.
  let context: ToolHookContext | undefined;
  const contextOnce = () => {
    context ??= env.contextFor(view);
    return context;
  };
  const gated =
    env.hooks.toolGate.taps.length > 0
      ? await runToolGate(env.hooks, gateCall, contextOnce(), trail, options.explainAfterDeny === true)
      : undefined;
  const verdict = gated ?? (await defaultVerdictFor(env, gateCall));

  if (verdict.decision === "ask" && options.skipPermission) {
    const plan = refusal(traced(env, { decision: "deny", by: verdict.by, reason: verdict.reason }, trail));
    return { ...plan, args, gate: verdict, facts };
  }
  let record: DecisionRecord;
  if (verdict.decision === "ask") {
    const answer = await runBail(
      env.hooks,
      "permissionAsk",
      { call: gateCall, verdict },
      contextOnce(),
      trail,
    );
    if (!answer && env.onUnanswered?.() === "park") {
      return { action: "park", args, askedBy: verdict.by, reason: verdict.reason, gate: verdict, facts };
    }
    record = answer
      ? {
          decision: answer.decision,
          by: answer.by,
          reason: answer.reason ?? verdict.reason,
          askedBy: verdict.by,
        }
      : {
          decision: "deny",
          by: verdict.by,
          reason: `${verdict.reason} (asked, but no permission handler answered: denied)`,
          unanswered: true,
        };
  } else {
    record = { decision: verdict.decision, by: verdict.by, reason: verdict.reason };
  }

  if (record.decision === "deny") {
    return { ...(await refuseWith(env, call, args, trail, record)), gate: verdict, facts };
  }
  traced(env, record, trail);
  await env.emit({ type: "tool_decision", toolCallId: call.id, toolName: call.name, args, ...record });
  return { action: "execute", view, args, facts, decision: record, gate: verdict };
}

/**
 * The record with the trail on it (the same array: later steps cannot follow a decision),
 * and, in a child agent, the agent path on `by`: every record passes here once.
 */
function traced(
  env: DecisionEnvironment,
  record: DecisionRecord,
  trail: DecisionStep[] | undefined,
): DecisionRecord {
  if (trail) record.trail = trail;
  if (env.agentPath !== undefined) record.by = `${record.by} in ${env.agentPath}`;
  return record;
}

async function refuseWith(
  env: DecisionEnvironment,
  call: ToolCall,
  args: Record<string, unknown>,
  trail: DecisionStep[] | undefined,
  record: DecisionRecord,
  detail?: string,
): Promise<ToolDecision> {
  traced(env, record, trail);
  await env.emit({ type: "tool_decision", toolCallId: call.id, toolName: call.name, args, ...record });
  return { ...refusal(record, detail), args };
}

function refusal(record: DecisionRecord, detail?: string): ToolCallPlan {
  return {
    action: "refuse",
    result: {
      content: [{ type: "text", text: detail ?? `Tool call denied by ${record.by}: ${record.reason}` }],
      isError: true,
    },
    decision: record,
  };
}
