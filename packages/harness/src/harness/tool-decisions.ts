/**
 * How the harness decides one tool call (spec "One run", step 4) - the one
 * decision pipeline: runs use it through the loop, and `evaluateToolCall` in
 * @rein/sdk calls it directly (no model, no execution, no events), so a verdict
 * seen offline is the verdict a run would record, `by` included.
 *
 * `toolCall` may rewrite the arguments (validated again against the snapshot's
 * schema), `toolGate` reduces to the strictest verdict, an `ask` goes to
 * `permissionAsk` (no answer = deny), and the outcome is recorded with who
 * decided and why. Invariants: nothing here can turn a deny into an allow; the
 * arguments every tap sees are deeply frozen (validated ones, and a rewrite once
 * validated again), so an in-place change cannot skip validation: it throws in
 * the tap that tries it.
 *
 * With `trail`, every tap that ran leaves one step (tap-call.ts writes them), in
 * order, and the record carries them: the per-tap "who said what" behind `by`.
 * With `explainAfterDeny` (`rein check` only; never a run), the gate taps after
 * the deciding deny are asked too and leave `consulted: false` steps; their
 * answers never change the decision (explain-gate.ts).
 */
import type { JsonObject, ToolCall } from "@earendil-works/pi-ai";
import { describeError } from "../errors.js";
import type { HarnessEvent } from "../events/event-types.js";
import { runBail, runToolGate, runWaterfall } from "../hooks/create-hooks.js";
import { askAfterDeny, explainDenials } from "../hooks/explain-gate.js";
import type { HarnessHooks } from "../hooks/hook-table.js";
import type { AttributedVerdict, ToolCallInfo, ToolGateCall, ToolHookContext } from "../hooks/hook-types.js";
import { validatedArgs } from "../loop/frozen-args.js";
import type { ToolCallPlan } from "../loop/loop-types.js";
import type { DecisionRecord, DecisionStep } from "../session/entries.js";
import type { ToolInspectionContext } from "../tools.js";
import { type AnyAgentTool, inspectToolCall, type ToolCallFacts } from "../tools.js";
import type { DefaultToolVerdict } from "./live-config.js";

export interface DecisionEnvironment {
  hooks: HarnessHooks;
  defaultVerdict(): DefaultToolVerdict;
  contextFor(call: ToolCallInfo): ToolHookContext;
  emit(event: HarnessEvent): Promise<void>;
  /** Where the call is inspected (the turn's cwd and session). */
  place: ToolInspectionContext;
  /** What an `ask` nobody answers becomes: `deny` (default) or `park` (wait for a person). */
  onUnanswered?(): "deny" | "park";
  /** In a child agent: its path (`task#1 of run r1`), appended to every record's `by`. */
  agentPath?: string;
}

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

export function resolveDefaultVerdict(source: DefaultToolVerdict, call: ToolGateCall): AttributedVerdict {
  if (typeof source === "function") return { ...source(call), by: `${HARNESS_DECIDER}:default` };
  return {
    decision: source,
    reason: `no gate had an opinion; default is ${source}`,
    by: `${HARNESS_DECIDER}:default`,
  };
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
  if (options.explainAfterDeny) explainDenials(trail);
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
  const base = { id: call.id, name: call.name, risk: tool.risk, tool };
  if (env.hooks.toolCall.taps.length > 0) {
    const rewritten = await runWaterfall(
      env.hooks,
      "toolCall",
      { id: call.id, name: call.name, args },
      env.contextFor({ ...base, args }),
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

  let facts: Readonly<ToolCallFacts>;
  try {
    facts = await inspectToolCall(tool, args, env.place);
  } catch (error) {
    return refuseWith(env, call, args, trail, {
      decision: "deny",
      by: HARNESS_DECIDER,
      reason: `could not inspect the arguments: ${describeError(error)}`,
    });
  }
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
    context ??= env.contextFor({ ...base, args, facts });
    return context;
  };
  const gated =
    env.hooks.toolGate.taps.length > 0
      ? await runToolGate(env.hooks, gateCall, contextOnce(), trail)
      : undefined;
  const verdict = gated ?? resolveDefaultVerdict(env.defaultVerdict(), gateCall);
  if (options.explainAfterDeny && trail && verdict.decision === "deny") {
    await askAfterDeny(env.hooks, trail, gateCall, contextOnce());
  }

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
  return { action: "execute", args, facts, decision: record, gate: verdict };
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
