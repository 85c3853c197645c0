/**
 * `evaluateToolCall`: runs one tool call through a harness's decision stack -
 * argument validation, `toolCall` (rewrite), `toolGate` (strictest wins), the
 * default verdict, and `permissionAsk` for an `ask` - without a model and without
 * executing the tool. Policy tests use it as a one-liner; `rein replay` uses it to
 * re-decide recorded calls under the current plugins.
 *
 * Invariant: it mirrors the harness's own decision order (tool-decisions.ts in
 * @rein/harness) using the harness's exported runners, so a verdict seen here is
 * the verdict a run would record, `by` included. It emits no events and writes
 * nothing to the session (a tap may still use its context's queues or session).
 * No test-runner code: it is part of the main entry.
 */
import { type ToolCall, validateToolArguments } from "@mariozechner/pi-ai";
import {
  type AgentHarness,
  type AnyAgentTool,
  type AttributedVerdict,
  describeError,
  HARNESS_DECIDER,
  inspectToolCall,
  NO_FACTS,
  resolveDefaultVerdict,
  runBail,
  runToolGate,
  runWaterfall,
  type ToolCallFacts,
  type ToolGateCall,
  type ToolRisk,
} from "@rein/harness";
import { Type } from "typebox";
import { toolHookContext } from "./harness-views.js";

export interface ToolCallProbe {
  name: string;
  args?: Record<string, unknown>;
  /** Overrides the registered tool's risk (or gives one to a tool the harness does not have). */
  risk?: ToolRisk;
  id?: string;
}

export interface EvaluateToolCallOptions {
  /** Stop at the gate: report an `ask` as is instead of running `permissionAsk`. */
  skipPermission?: boolean;
  /** Passed to the taps as `context.signal`. */
  signal?: AbortSignal;
}

export interface ToolCallEvaluation {
  /** What a run would do: `ask` only with `skipPermission`. */
  decision: "allow" | "ask" | "deny";
  /** Who decided: `<plugin>`, `<plugin>:<rule>`, `harness` or `harness:default`. */
  by: string;
  reason: string;
  /** The arguments after `toolCall` rewrites (and schema coercion). */
  args: Record<string, unknown>;
  /** The gate's verdict before any permission answer (absent when validation refused the call). */
  gate?: AttributedVerdict;
  /** For an answered `ask`: who asked. */
  askedBy?: string;
  /** For an `ask` no `permissionAsk` tap answered (denied): set, like the run's record. */
  unanswered?: true;
  /** Whether the harness has a tool of that name (arguments are validated only then). */
  registered: boolean;
}

/** Anything that holds a harness: the harness itself or a test harness. */
export type HarnessLike = AgentHarness | { readonly harness: AgentHarness };

const harnessOf = (target: HarnessLike): AgentHarness =>
  "harness" in target && !("hooks" in target) ? target.harness : (target as AgentHarness);

/** A stand-in for a tool the harness does not have (a replayed call to a removed tool). */
function placeholderTool(name: string, risk: ToolRisk | undefined): AnyAgentTool {
  const tool: AnyAgentTool = {
    name,
    description: "(not registered in this harness)",
    parameters: Type.Object({}, { additionalProperties: true }),
    execute: () => ({ content: [{ type: "text", text: "not registered" }], isError: true }),
  };
  if (risk !== undefined) tool.risk = risk;
  return tool;
}

export async function evaluateToolCall(
  target: HarnessLike,
  probe: ToolCallProbe,
  options: EvaluateToolCallOptions = {},
): Promise<ToolCallEvaluation> {
  const harness = harnessOf(target);
  const registered = harness.tools.find((tool) => tool.name === probe.name);
  const risk = probe.risk ?? registered?.risk;
  const tool = registered
    ? probe.risk !== undefined && probe.risk !== registered.risk
      ? { ...registered, risk: probe.risk }
      : registered
    : placeholderTool(probe.name, risk);
  const id = probe.id ?? "probe";
  const call: ToolCall = { type: "toolCall", id, name: probe.name, arguments: probe.args ?? {} };
  const signal = options.signal ?? new AbortController().signal;
  const refuse = (args: Record<string, unknown>, reason: string): ToolCallEvaluation => ({
    decision: "deny",
    by: HARNESS_DECIDER,
    reason,
    args,
    registered: registered !== undefined,
  });

  let args = call.arguments;
  if (registered) {
    try {
      args = validateToolArguments(tool, call);
    } catch (error) {
      return refuse(args, `invalid arguments: ${describeError(error)}`);
    }
  }

  const base = { id, name: probe.name, risk, tool };
  if (harness.hooks.toolCall.taps.length > 0) {
    const rewritten = await runWaterfall(
      harness.hooks,
      "toolCall",
      { id, name: probe.name, args },
      toolHookContext(harness, signal, { ...base, args }),
    );
    if (rewritten.args !== args) {
      if (registered) {
        try {
          args = validateToolArguments(tool, { ...call, arguments: rewritten.args });
        } catch (error) {
          return refuse(
            rewritten.args,
            `arguments rewritten by a toolCall tap are invalid: ${describeError(error)}`,
          );
        }
      } else {
        args = rewritten.args;
      }
    }
  }

  let facts: Readonly<ToolCallFacts> = NO_FACTS;
  if (registered) {
    try {
      facts = await inspectToolCall(tool, args, { cwd: harness.cwd, sessionId: harness.sessionId });
    } catch (error) {
      return refuse(args, `could not inspect the arguments: ${describeError(error)}`);
    }
  }
  const gateCall: ToolGateCall = { id, name: probe.name, args, risk, facts };
  const context = toolHookContext(harness, signal, { ...base, args, facts });
  const gate =
    (await runToolGate(harness.hooks, gateCall, context)) ??
    resolveDefaultVerdict(harness.defaultToolVerdict, gateCall);
  const result = (fields: Omit<ToolCallEvaluation, "args" | "gate" | "registered">): ToolCallEvaluation => ({
    ...fields,
    args,
    gate,
    registered: registered !== undefined,
  });

  if (gate.decision !== "ask" || options.skipPermission) {
    return result({ decision: gate.decision, by: gate.by, reason: gate.reason });
  }
  const answer = await runBail(harness.hooks, "permissionAsk", { call: gateCall, verdict: gate }, context);
  if (!answer) {
    return result({
      decision: "deny",
      by: gate.by,
      reason: `${gate.reason} (asked, but no permission handler answered: denied)`,
      unanswered: true,
    });
  }
  return result({
    decision: answer.decision,
    by: answer.by,
    reason: answer.reason ?? gate.reason,
    askedBy: gate.by,
  });
}
