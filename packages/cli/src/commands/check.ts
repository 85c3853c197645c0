/**
 * `rein check <call>`: one tool call through the configured stack's `toolCall`
 * and `toolGate` (and `permissionAsk` on a terminal), with no model and no tool
 * execution, printing the decision trail: every tap in order with its answer,
 * the rewrites with their authors, the facts the gates saw, and the result.
 *
 * Invariant: the decision is the harness's own pipeline (`evaluateToolCall`),
 * so what check says is what a run would record. It runs in explain mode: the
 * gate taps after the deciding deny are still asked, on the throwaway check
 * session, and shown as not consulted with what they would have said - the
 * verdict is the one a run reaches without asking them. Exit codes (documented
 * in the README): 0 allow, 1 deny, 2 ask (not answered), 64 usage, 70 the stack
 * failed, 78 config / plugin / model.
 */
import { readFileSync } from "node:fs";
import { type AgentHarness, agentOf, type DecisionStep, isHarnessError } from "@rein/harness";
import { childConfigs, closestNames, evaluateToolCall, type ToolCallEvaluation } from "@rein/sdk";
import { type Agent, inspectionAgent } from "../agent/build-agent.js";
import { argumentsFor, type CheckInput, parseCall, primaryParameter } from "../check/check-call.js";
import { type CheckReport, renderCheck } from "../check/check-report.js";
import { CliError, runFailed, usageError, withExitCode } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { reserveStdout } from "../ui/json-stdout.js";
import { terminal } from "../ui/terminal.js";

export const CheckExit = { allow: 0, deny: 1, ask: 2, usage: 64, failed: 70, config: 78 } as const;

export interface CheckOptions {
  arg?: string[];
  json?: boolean;
  /** Decide as a child agent of this agent config (`childConfigs`: the task tool's `agents`, `default`). */
  asChild?: string;
}

/** The agent path a `--as-child` decision carries. */
export const checkChildPath = (config: string) => `task(${config}) of rein check`;

/** Config, plugin and model problems, and everything else unexpected, as check's own exit codes. */
function rescoped(error: unknown): Error {
  if (error instanceof CliError) {
    const code =
      error.code === "usage" ? CheckExit.usage : error.code === "run" ? CheckExit.failed : CheckExit.config;
    return withExitCode(error, code);
  }
  if (isHarnessError(error)) {
    const where = error.plugin ? ` (plugin ${error.plugin}${error.hook ? `, ${error.hook}` : ""})` : "";
    return withExitCode(
      runFailed(`the stack failed on this call${where}: ${error.message}`, error),
      CheckExit.failed,
    );
  }
  return withExitCode(runFailed((error as Error)?.message ?? String(error), error), CheckExit.failed);
}

export async function checkCommand(
  call: string | undefined,
  options: CheckOptions,
  globals: GlobalOptions,
): Promise<number> {
  const json = options.json ? reserveStdout() : undefined;
  try {
    const fromStdin = call === undefined || call === "-";
    if (fromStdin && process.stdin.isTTY === true) {
      throw usageError(
        "no call given",
        "rein check 'bash(git status)', rein check write --arg path=x, or a JSON call on stdin",
      );
    }
    const input = parseCall(call, options.arg ?? [], () => readFileSync(0, "utf8"));
    // Asks are put to permissionAsk only where someone can answer them.
    const interactive = !json && !fromStdin && process.stdin.isTTY === true && process.stderr.isTTY === true;
    const agent = await inspectionAgent(globals);
    let report: CheckReport;
    try {
      const child = options.asChild === undefined ? undefined : startCheckChild(agent, options.asChild);
      try {
        report = await decide(child ?? agent.harness, input, interactive, child && agent.harness);
      } finally {
        if (child) {
          await child.close();
          child.session.close();
        }
      }
    } finally {
      await agent.dispose();
    }
    if (json) json.write(`${JSON.stringify(report, null, 2)}\n`);
    else renderCheck(report, terminal());
    return report.exitCode;
  } catch (error) {
    throw rescoped(error);
  } finally {
    json?.release();
  }
}

/** `--as-child`: a child of the check's agent, as the named agent config starts one. */
function startCheckChild(agent: Agent, config: string): AgentHarness {
  const configs = childConfigs(agent.harness);
  const found = configs.get(config);
  if (!found) {
    const known = [...configs.keys()];
    throw usageError(
      `--as-child: no agent config "${config}"`,
      known.length > 0
        ? `agent configs: ${known.join(", ")}`
        : "add @rein/tools-task (its agents) to plugins",
    );
  }
  return found.start({ toolCallId: "check", name: `task(${config})`, path: checkChildPath(config) });
}

/** `parent`: with `--as-child`, the agent whose tools a child may not have (an inactive tool to it). */
async function decide(
  harness: AgentHarness,
  input: CheckInput,
  interactive: boolean,
  parent?: AgentHarness,
): Promise<CheckReport> {
  const find = (of: AgentHarness) => of.tools.find((candidate) => candidate.name === input.name);
  const tool = find(harness) ?? (parent && find(parent));
  if (!tool) {
    const names = harness.tools.map((t) => t.name);
    const [close] = closestNames(input.name, names, { limit: 1 });
    const known = names.join(", ") || "none (add a tool pack to plugins)";
    throw usageError(
      `unknown tool "${input.name}"${close === undefined ? "" : `; did you mean "${close}"?`}`,
      `registered tools: ${known}`,
    );
  }
  const given = argumentsFor(input, tool);
  const about = {
    name: tool.name,
    risk: tool.risk ?? null,
    owner: tool.owner ?? null,
    active: harness.activeToolNames.includes(tool.name) && harness.tools.includes(tool),
    primary: primaryParameter(tool) ?? null,
  };
  if (!about.active) {
    // A run never offers an inactive tool, and refuses a call to it before any tap: so does check.
    const child = agentOf(harness);
    const reason = child
      ? `"${tool.name}" is not among the tools of ${child.path} (a child's tools.active only narrows): a run refuses it before any tap`
      : `"${tool.name}" is not active (tools.active): a run refuses it before any tap`;
    return {
      tool: about,
      input: given,
      decision: "deny",
      by: "harness",
      reason,
      args: given,
      trail: [],
      notConsulted: [],
      facts: {},
      ask: null,
      exitCode: CheckExit.deny,
    };
  }
  const evaluation = await evaluateToolCall(
    harness,
    { name: input.name, args: given, id: "check" },
    { skipPermission: !interactive, trail: true, explainAfterDeny: true, unregistered: "refuse" },
  );
  const trail = evaluation.trail ?? [];
  return {
    tool: about,
    input: given,
    decision: evaluation.decision,
    by: evaluation.by,
    reason: evaluation.reason,
    ...(evaluation.askedBy !== undefined ? { askedBy: evaluation.askedBy } : {}),
    args: evaluation.args,
    trail,
    notConsulted: notConsulted(harness, trail),
    facts: evaluation.facts,
    ask: askOf(harness, evaluation, interactive),
    exitCode: CheckExit[evaluation.decision],
  };
}

/**
 * Gate taps a run would not consult (a deny came first, or the call was refused
 * before the gate): each tap a run consults leaves one step without `consulted: false`.
 */
function notConsulted(harness: AgentHarness, trail: DecisionStep[]): string[] {
  const ran = trail.filter((step) => step.hook === "toolGate" && step.consulted !== false).length;
  return harness.hooks.toolGate.taps.slice(ran).map((tap) => tap.name);
}

function askOf(
  harness: AgentHarness,
  evaluation: ToolCallEvaluation,
  interactive: boolean,
): CheckReport["ask"] {
  const gate = evaluation.gate;
  if (gate?.decision !== "ask") return null;
  const taps = harness.hooks.permissionAsk.taps.map((tap) => tap.name);
  return { by: gate.by, reason: gate.reason, taps, answered: interactive };
}
