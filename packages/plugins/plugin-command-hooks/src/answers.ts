/**
 * What the agents' hook answers mean, folded over every handler that ran for
 * one event (they run in parallel, as in the agents): the strictest decision
 * wins (deny over ask over allow), any block blocks, contexts add up, and the
 * last handler (in configuration order) that rewrites the input or output is
 * the rewrite. Field names as Claude Code 2.1.332 defines them (Codex and
 * Gemini CLI copy them; Gemini's top-level `decision: "deny"` reads the same).
 */
import type { HandlerOutcome } from "./run-handler.js";

export interface Folded {
  decision?: "allow" | "ask" | "deny";
  reason?: string;
  /** Which handler decided (for `rule`). */
  decidedBy?: string;
  updatedInput?: Record<string, unknown>;
  updatedOutput?: unknown;
  context: string[];
  /** A prompt refused, a stop refused (one more turn), a result flagged. */
  block?: string;
}

const RANK = { allow: 0, ask: 1, deny: 2 } as const;
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined;

export function fold(
  outcomes: readonly { name: string; outcome: HandlerOutcome }[],
  plainTextIsContext: boolean,
): Folded {
  const folded: Folded = { context: [] };
  const decide = (decision: "allow" | "ask" | "deny", reason: string, name: string) => {
    if (folded.decision === undefined || RANK[decision] > RANK[folded.decision]) {
      folded.decision = decision;
      folded.reason = reason;
      folded.decidedBy = name;
    }
  };
  for (const { name, outcome } of outcomes) {
    if (outcome.kind === "block") {
      decide("deny", outcome.reason, name);
      folded.block ??= outcome.reason;
      continue;
    }
    const json = outcome.json;
    if (!json) {
      if (plainTextIsContext && outcome.text !== "") folded.context.push(outcome.text);
      continue;
    }
    const specific = isObject(json.hookSpecificOutput) ? json.hookSpecificOutput : {};
    const reason =
      text(specific.permissionDecisionReason) ??
      text(json.reason) ??
      text(json.stopReason) ??
      `decided by ${name}`;
    const permission = specific.permissionDecision;
    if (permission === "allow" || permission === "ask" || permission === "deny")
      decide(permission, reason, name);
    if (json.decision === "block" || json.decision === "deny") {
      decide("deny", reason, name);
      folded.block ??= reason;
    } else if (json.decision === "approve" || json.decision === "allow") decide("allow", reason, name);
    if (json.continue === false) {
      decide("deny", reason, name);
      folded.block ??= reason;
    }
    if (isObject(specific.updatedInput)) folded.updatedInput = specific.updatedInput;
    if (specific.updatedToolOutput !== undefined) folded.updatedOutput = specific.updatedToolOutput;
    else if (specific.updatedMCPToolOutput !== undefined)
      folded.updatedOutput = specific.updatedMCPToolOutput;
    const context = text(specific.additionalContext);
    if (context) folded.context.push(context);
  }
  return folded;
}
