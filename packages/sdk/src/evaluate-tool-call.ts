/**
 * `evaluateToolCall`: runs one tool call through a harness's decision stack -
 * argument validation, `toolCall` (rewrite), `toolGate` (strictest wins), the
 * default verdict, and `permissionAsk` for an `ask` - without a model and without
 * executing the tool. Policy tests use it as a one-liner; `rein replay` uses it to
 * re-decide recorded calls under the current plugins.
 *
 * Invariant: it is the harness's own pipeline (`decideToolCall` in @rein/harness,
 * the function every run uses), not a copy, so a verdict seen here is the verdict
 * a run would record, `by` and reasons included. It emits no events and writes
 * nothing to the session (a tap may still use its context's queues or session).
 * No test-runner code: it is part of the main entry.
 */
import type { JsonObject, ToolCall } from "@earendil-works/pi-ai";
import {
  type AgentHarness,
  type AnyAgentTool,
  type AttributedVerdict,
  agentOf,
  type DecisionStep,
  decideToolCall,
  type ToolCallFacts,
  type ToolRisk,
} from "@rein/harness";
import { Type } from "typebox";
import { closestName } from "./closest-name.js";
import { invalidProbe, unknownTool } from "./errors.js";

export interface ToolCallProbe {
  name: string;
  args?: Record<string, unknown>;
  /**
   * The risk of a tool the harness does not have. For a registered tool the
   * registered risk decides; a probe that states another one is refused (a test
   * must not pass on a risk the real tool does not have).
   */
  risk?: ToolRisk;
  id?: string;
}

/** The facts of a call no `inspect` looked at. */
const NO_FACTS: Readonly<ToolCallFacts> = Object.freeze({});

export interface EvaluateToolCallOptions {
  /** Stop at the gate: report an `ask` as is instead of running `permissionAsk`. */
  skipPermission?: boolean;
  /** Passed to the taps as `context.signal`. */
  signal?: AbortSignal;
  /**
   * A tool the harness does not have: `evaluate` runs the gates on a stand-in (how
   * `rein replay` re-decides calls to removed tools); `refuse` denies it by
   * `harness` as a run would ("unknown tool"); `throw` rejects with `unknown_tool`
   * naming the closest registered name. Default `evaluate`; the testing kit's
   * `checkToolCall` defaults to `throw`, so a typo fails the test instead of
   * passing as a deny (or an allow): a test probes an unknown tool only by saying so.
   */
  unregistered?: "evaluate" | "refuse" | "throw";
  /** Collect what every tap said (`trail` on the evaluation). Default off. */
  trail?: boolean;
  /**
   * Explain mode (implies `trail`; what `rein check` uses): after a tap's deny
   * decides the gate, the `toolGate` taps after it are still called - each under
   * its timeout, failures tagged as in a run - and their answers added to the
   * trail as steps with `consulted: false`. They never change the evaluation; a
   * run never asks them. Those taps really run: any state they keep changes on
   * this harness's session (`rein check` uses a throwaway one). Default off.
   */
  explainAfterDeny?: boolean;
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
  /** What the tool's `inspect` found (canonical `paths`, a parsed `command`); `{}` without one. */
  facts: Readonly<ToolCallFacts>;
  /**
   * With the `trail` option: every tap that ran, in order, with its answer (see
   * `DecisionStep`); with `explainAfterDeny`, also the gate taps after the
   * deciding deny (`consulted: false`).
   */
  trail?: DecisionStep[];
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

const agentPathOf = (harness: AgentHarness) => {
  const agent = agentOf(harness);
  return agent === undefined ? {} : { agentPath: agent.path };
};

export async function evaluateToolCall(
  target: HarnessLike,
  probe: ToolCallProbe,
  options: EvaluateToolCallOptions = {},
): Promise<ToolCallEvaluation> {
  const harness = harnessOf(target);
  const registered = harness.tools.find((tool) => tool.name === probe.name);
  if (!registered && options.unregistered === "throw") {
    const names = harness.tools.map((tool) => tool.name);
    throw unknownTool(probe.name, names, closestName(probe.name, names));
  }
  const risk = probe.risk ?? registered?.risk;
  if (registered && probe.risk !== undefined && probe.risk !== registered.risk) {
    throw invalidProbe(
      probe.name,
      `the probe says risk "${probe.risk}" but the registered tool's risk is "${registered.risk ?? "none"}"; leave risk out of the probe`,
    );
  }
  const tool = registered ?? placeholderTool(probe.name, risk);
  const call: ToolCall = {
    type: "toolCall",
    id: probe.id ?? "probe",
    name: probe.name,
    // A probe stands for a model's call, whose arguments are JSON.
    arguments: (probe.args ?? {}) as JsonObject,
  };
  const signal = options.signal ?? new AbortController().signal;
  if (!registered && options.unregistered === "refuse") {
    const available = harness.tools.map((t) => t.name).join(", ") || "none";
    return {
      decision: "deny",
      by: "harness",
      reason: `unknown tool "${probe.name}" (registered: ${available})`,
      args: call.arguments,
      registered: false,
      facts: NO_FACTS,
      ...(options.trail || options.explainAfterDeny ? { trail: [] } : {}),
    };
  }
  const decided = await decideToolCall(
    {
      hooks: harness.hooks,
      defaultVerdict: () => harness.defaultToolVerdict,
      contextFor: (info) => harness.toolHookContext(signal, info),
      emit: async () => undefined, // an evaluation is not a fact: no events
      place: { cwd: harness.cwd, sessionId: harness.sessionId },
      // A child agent's decisions name it, as in its runs.
      ...agentPathOf(harness),
    },
    call,
    tool,
    // A registered tool's arguments are validated, which copies them; those of a tool the
    // harness does not have cannot be: taken as given (a copy, so no tap touches the probe's).
    registered ? call.arguments : structuredClone(call.arguments),
    {
      validate: registered !== undefined,
      skipPermission: options.skipPermission === true,
      trail: options.trail === true,
      explainAfterDeny: options.explainAfterDeny === true,
    },
  );
  const evaluation: ToolCallEvaluation = {
    decision: decided.decision?.decision ?? "allow",
    by: decided.decision?.by ?? "harness",
    reason: decided.decision?.reason ?? "",
    args: decided.args,
    registered: registered !== undefined,
    facts: decided.facts ?? NO_FACTS,
  };
  if (decided.gate) evaluation.gate = decided.gate;
  if (decided.trail) evaluation.trail = decided.trail;
  if (decided.decision?.askedBy !== undefined) evaluation.askedBy = decided.decision.askedBy;
  if (decided.decision?.unanswered) evaluation.unanswered = true;
  // With `skipPermission`, an ask stops at the gate: report it as the gate said.
  if (options.skipPermission && decided.gate?.decision === "ask") {
    // In a child agent, named as its records are (the gate's own verdict stays plain).
    const agent = agentOf(harness);
    const by = agent === undefined ? decided.gate.by : `${decided.gate.by} in ${agent.path}`;
    Object.assign(evaluation, { decision: "ask", by, reason: decided.gate.reason });
  }
  return evaluation;
}
