/**
 * What the parent learns about a child: its answer, and a summary of every
 * decision made in it (who allowed or refused what, with the agent path), kept
 * on the `task` call's result (`details.task`) and shown to the model.
 */
import type { AgentMessage, RunOutcome, SessionEntry } from "@rein/sdk";

export interface ChildDecision {
  toolCallId: string;
  tool: string;
  decision: "allow" | "deny";
  by: string;
  reason: string;
}

/** `details.task` of a `task` call's result. */
export interface TaskDetails {
  /** `task#1`. */
  name: string;
  /** `task#1 of run r1`: what every decision in the child carries. */
  path: string;
  agent: string;
  sessionId: string;
  status: RunOutcome["status"] | "refused";
  reason?: string;
  decisions: ChildDecision[];
  usage: { turns: number; tokens: number; cost: number };
}

/** Every decided tool call of the child's session, in order. */
export function childDecisions(entries: readonly SessionEntry[]): ChildDecision[] {
  const decisions: ChildDecision[] = [];
  for (const entry of entries) {
    if (entry.type !== "message" || entry.message.role !== "toolResult") continue;
    const decision = "decision" in entry.message ? entry.message.decision : undefined;
    if (!decision) continue;
    decisions.push({
      toolCallId: entry.message.toolCallId,
      tool: entry.message.toolName,
      decision: decision.decision,
      by: decision.by,
      reason: decision.reason,
    });
  }
  return decisions;
}

export function childUsage(entries: readonly SessionEntry[]): TaskDetails["usage"] {
  const usage = { turns: 0, tokens: 0, cost: 0 };
  for (const entry of entries) {
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    usage.turns++;
    const u = entry.message.usage;
    if (u) {
      usage.tokens += u.totalTokens || u.input + u.output;
      usage.cost += u.cost?.total ?? 0;
    }
  }
  return usage;
}

/** The child's final answer: the text of its last assistant message. */
export function finalText(messages: readonly AgentMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as AgentMessage;
    if (message.role !== "assistant") continue;
    const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n");
    if (text !== "" || message.errorMessage === undefined) return text;
    return `(the child ended with an error: ${message.errorMessage})`;
  }
  return "";
}

/** One line per refused call, and counts: what the parent's model reads after the answer. */
export function summaryText(details: TaskDetails): string {
  const allowed = details.decisions.filter((d) => d.decision === "allow").length;
  const refused = details.decisions.filter((d) => d.decision === "deny");
  const lines = [
    `[${details.path}: ${details.status}; ${allowed} call(s) allowed, ${refused.length} refused; session ${details.sessionId}]`,
  ];
  for (const d of refused) lines.push(`- ${d.tool} refused by ${d.by}: ${d.reason}`);
  return lines.join("\n");
}
