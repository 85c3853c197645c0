/**
 * A child's own reins: the gate tap that adds its extra deny / ask rules and its
 * sandbox floor to the parent's stack (the harness forwards every parent tap).
 *
 * Invariants: this tap can only deny or ask (the harness also drops any allow a
 * child's own tap gives); rules are plugin-policy's (same grammar, same path and
 * shell analysis), compiled once when the pack loads; a bash call whose facts show
 * a sandbox looser than the floor, or that asks to leave the sandbox, is denied.
 */
import path from "node:path";
import {
  type CompiledRule,
  compilePolicy,
  evaluateRules,
  PATH_TOOLS,
  SHELL_TOOLS,
  shellFactsOf,
} from "@rein/plugin-policy";
import { type AgentHarness, type GateVerdict, SdkError, type ToolGateCall } from "@rein/sdk";
import { type ChildAgentSpec, SANDBOX_RANK } from "./options.js";

const KINDS: { pathTools: string[]; shellTools: string[] } = {
  pathTools: [...PATH_TOOLS],
  shellTools: [...SHELL_TOOLS],
};

export interface CompiledNarrowing {
  rules: CompiledRule[];
  sandbox: ChildAgentSpec["sandbox"];
}

/** Compiles an agent's rules (their ids name the agent: `reviewer.rules[0]`). */
export async function compileNarrowing(
  plugin: string,
  agent: string,
  spec: ChildAgentSpec,
  cwd: string,
): Promise<CompiledNarrowing> {
  const rules = (spec.rules ?? []).map((rule, index) => ({
    ...rule,
    id: rule.id ?? `${agent}.rules[${index}]`,
  }));
  if (rules.length === 0) return { rules: [], sandbox: spec.sandbox };
  try {
    return {
      rules: await compilePolicy({ rules, ...KINDS }, { cwd, root: cwd }, plugin),
      sandbox: spec.sandbox,
    };
  } catch (error) {
    // plugin-policy names the path inside its own options: put it under this agent's.
    if (error instanceof SdkError && error.path !== undefined) {
      const at = `/agents/${agent}${error.path}`;
      throw new SdkError(error.code, error.message.replace(`option ${error.path}`, `option ${at}`), {
        plugin,
        path: at,
      });
    }
    throw error;
  }
}

function sandboxVerdict(floor: ChildAgentSpec["sandbox"], call: ToolGateCall): GateVerdict | undefined {
  if (floor === undefined || floor === "off") return undefined;
  const sandbox = (call.facts as { sandbox?: { mode?: string; unsandboxedRequested?: boolean } }).sandbox;
  if (sandbox === undefined) return undefined;
  const rank = SANDBOX_RANK[sandbox.mode as keyof typeof SANDBOX_RANK] ?? 0;
  if (sandbox.unsandboxedRequested === true || rank < SANDBOX_RANK[floor]) {
    return {
      decision: "deny",
      rule: "sandbox",
      reason: `this child agent runs bash in the "${floor}" sandbox or stricter; this call would run ${sandbox.unsandboxedRequested ? "outside the sandbox" : `in "${sandbox.mode}"`}`,
    };
  }
  return undefined;
}

/** Adds the narrowing tap to a child's gate (nothing when there is nothing to add). */
/** `by` reads `<plugin>:<agent>.rules[0]` or `<plugin>:sandbox`, then the agent path. */
export function applyNarrowing(plugin: string, child: AgentHarness, narrowing: CompiledNarrowing): void {
  if (narrowing.rules.length === 0 && narrowing.sandbox === undefined) return;
  child.hooks.toolGate.tapPromise(plugin, async (call, context) => {
    const floor = sandboxVerdict(narrowing.sandbox, call);
    if (floor) return floor;
    if (narrowing.rules.length === 0) return undefined;
    const where = { cwd: context.config.cwd, root: path.resolve(context.config.cwd) };
    const shell = KINDS.shellTools.includes(call.name) ? await shellFactsOf(call) : undefined;
    const verdict = evaluateRules(narrowing.rules, call, KINDS, where, shell);
    return verdict?.decision === "allow" ? undefined : verdict;
  });
}
