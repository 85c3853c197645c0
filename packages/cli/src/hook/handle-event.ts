/**
 * One hook event, start to answer, on a stack that is already built: decide
 * (hook-decision.ts), record (hook-audit.ts), say it in the agent's protocol
 * (agent-protocols.ts). Used by `rein hook <agent>` (one event per process)
 * and `rein hook serve` (many, on one stack).
 *
 * Invariant: it never throws: a failure (a tap that throws or times out, an
 * audit that cannot be written) is the failure answer, which blocks the
 * gating events.
 */
import type { AgentHarness } from "@rein/harness";
import { answerFor, failureAnswer, type HookAnswer, type OnFailure } from "./agent-protocols.js";
import type { AuditWriter } from "./hook-audit.js";
import {
  decideCompaction,
  decidePrompt,
  decideStop,
  decideToolEvent,
  decideToolResult,
  type HookDecision,
} from "./hook-decision.js";
import type { HookInput } from "./hook-input.js";
import { missingStandIns } from "./stand-in-tools.js";

/** Gives a stack built from the project's config the agent tools' stand-ins it lacks. */
export function prepareHarness(harness: AgentHarness): void {
  const missing = missingStandIns(harness.tools);
  if (missing.length > 0) harness.setTools([...harness.tools, ...missing]);
}

function describe(error: unknown): string {
  const fields = error as { message?: string; plugin?: string; hook?: string };
  const where = fields.plugin ? ` (plugin ${fields.plugin}${fields.hook ? `, ${fields.hook}` : ""})` : "";
  return `${fields.message ?? String(error)}${where}`;
}

async function decide(harness: AgentHarness, input: HookInput): Promise<HookDecision> {
  switch (input.event) {
    case "PreToolUse":
    case "PermissionRequest":
      return decideToolEvent(harness, input);
    case "PostToolUse":
      return decideToolResult(harness, input);
    case "Stop":
      return decideStop(harness, input);
    case "PreCompact":
      return decideCompaction(harness, input);
    case "UserPromptSubmit":
      return decidePrompt(harness, input);
    default:
      return { verdict: { kind: "none" }, calls: [] };
  }
}

export async function handleEvent(
  harness: AgentHarness,
  audit: AuditWriter | undefined,
  input: HookInput,
  timeoutMs: number,
  onFailure: OnFailure = "block",
): Promise<HookAnswer> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the stack did not decide within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const decision = await Promise.race([decide(harness, input), timeout]);
    // A PermissionRequest is the same call PreToolUse already recorded: not recorded twice.
    const calls = input.event === "PreToolUse" ? decision.calls : [];
    if (audit) {
      try {
        await Promise.race([audit.record(input, calls), timeout]);
      } catch (error) {
        throw new Error(`cannot record the decision in the Rein session: ${describe(error)}`);
      }
    }
    return answerFor(input.agent, input.event, input.agentEvent, decision.verdict);
  } catch (error) {
    return failureAnswer(input.event, describe(error), onFailure);
  } finally {
    clearTimeout(timer);
  }
}
