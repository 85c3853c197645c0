/**
 * Each agent's hook protocol as a table: its event names, and how a Rein
 * decision is said back in exactly the fields that agent honours. Sources
 * (see the README's "Agent hooks" section): Claude Code 2.1.332's hook output
 * schemas (in its binary), Codex 0.171.0's `*.command.output.schema.json`
 * (in its binary: `additionalProperties: false` everywhere), Gemini CLI
 * 0.61.0's `hooks/types.d.ts` (@google/gemini-cli-core).
 *
 * Invariants: stdout is one JSON document or nothing; a Codex answer holds no
 * field its schema lacks, always `hookEventName`, never `ask` (Codex runs the
 * call on an ask), never a bare `allow` (it is "unsupported" there: an allow
 * is silence); a block the agent cannot read from JSON is exit 2 with the
 * reason on stderr.
 */

export const AGENTS = ["claude-code", "codex", "gemini"] as const;
export type AgentName = (typeof AGENTS)[number];

/** The events Rein answers, named as Claude Code names them. */
export type HookEvent =
  | "PreToolUse"
  | "PermissionRequest"
  | "PostToolUse"
  | "UserPromptSubmit"
  | "Stop"
  | "PreCompact"
  | "SessionStart"
  | "SessionEnd";

const CLAUDE_EVENTS: readonly HookEvent[] = [
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "PreCompact",
  "SessionStart",
  "SessionEnd",
];

/** Gemini CLI's names for the same moments. */
const GEMINI_EVENTS: Readonly<Record<string, HookEvent>> = {
  BeforeTool: "PreToolUse",
  AfterTool: "PostToolUse",
  BeforeAgent: "UserPromptSubmit",
  AfterAgent: "Stop",
  PreCompress: "PreCompact",
  SessionStart: "SessionStart",
  SessionEnd: "SessionEnd",
};

export function canonicalEvent(agent: AgentName, name: string): HookEvent | undefined {
  if (agent === "gemini") return GEMINI_EVENTS[name];
  return (CLAUDE_EVENTS as readonly string[]).includes(name) ? (name as HookEvent) : undefined;
}

/** The agent's own name for an event (what `hook install` writes and `hookEventName` says). */
export function agentEventName(agent: AgentName, event: HookEvent): string | undefined {
  if (agent !== "gemini") return event;
  return Object.entries(GEMINI_EVENTS).find(([, canonical]) => canonical === event)?.[0];
}

/** The events `rein hook install` registers for each agent. */
export const INSTALLED_EVENTS: Readonly<Record<AgentName, readonly HookEvent[]>> = {
  "claude-code": [
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SessionStart",
  ],
  codex: ["PreToolUse", "PermissionRequest", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"],
  gemini: ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"],
};

/** What Rein made of one event: a tool verdict, a block, or nothing to say. */
export type HookVerdict =
  | { kind: "tool"; decision: "allow" | "deny" | "ask"; by: string; reason: string }
  /** A prompt refused, a stop refused (one more turn: `reason` is what to do), a compaction cancelled. */
  | { kind: "block"; by: string; reason: string }
  /** Extra context for the model (SessionStart, UserPromptSubmit, PostToolUse). */
  | { kind: "context"; text: string }
  /** A replaced tool output (PostToolUse redaction): the agent's own output object, rewritten. */
  | { kind: "output"; output: unknown }
  | { kind: "none" };

/** What the hook process does: print `stdout` (one JSON document) and `stderr`, exit with `exitCode`. */
export interface HookAnswer {
  exitCode: 0 | 1 | 2;
  stdout: string;
  stderr: string;
}

const json = (value: unknown): HookAnswer => ({
  exitCode: 0,
  stdout: `${JSON.stringify(value)}\n`,
  stderr: "",
});
const silent: HookAnswer = { exitCode: 0, stdout: "", stderr: "" };
const blocked = (reason: string): HookAnswer => ({ exitCode: 2, stdout: "", stderr: `${reason}\n` });

/** The reason as the agent (and its model) reads it: which rule decided, and why. */
export function reasonText(by: string, reason: string): string {
  const why = reason.trim() === "" ? "(no reason given)" : reason.trim();
  return `Rein (${by}): ${why}`;
}

/** Events where a failure blocks (fail closed); elsewhere a failure is reported and the agent goes on. */
export const GATING_EVENTS: readonly HookEvent[] = ["PreToolUse", "PermissionRequest", "UserPromptSubmit"];

/** What a hook that could not decide does: `block` (the default) or `continue` (`--on-failure continue`). */
export type OnFailure = "block" | "continue";

/**
 * A hook that could not decide: exit 2 with the reason, where that blocks;
 * else exit 1 (reported). With `continue`, no answer at all (exit 0, the
 * reason on stderr): the agent's own permissions decide.
 */
export function failureAnswer(
  event: HookEvent | undefined,
  message: string,
  onFailure: OnFailure = "block",
): HookAnswer {
  const text = `rein hook: ${message}`;
  if (onFailure === "continue")
    return { exitCode: 0, stdout: "", stderr: `${text} (--on-failure continue: not decided)\n` };
  if (event === undefined || GATING_EVENTS.includes(event))
    return blocked(`${text} (blocked: Rein fails closed)`);
  return { exitCode: 1, stdout: "", stderr: `${text}\n` };
}

/** Rein's verdict in `agent`'s protocol for `event` (its agent-side name is `agentEvent`). */
export function answerFor(
  agent: AgentName,
  event: HookEvent,
  agentEvent: string,
  verdict: HookVerdict,
): HookAnswer {
  if (verdict.kind === "none") return silent;
  switch (event) {
    case "PreToolUse":
      return preToolUse(agent, agentEvent, verdict);
    case "PermissionRequest":
      return permissionRequest(agent, verdict);
    case "PostToolUse":
      return postToolUse(agent, agentEvent, verdict);
    case "UserPromptSubmit":
      if (verdict.kind === "block")
        return json({
          decision: agent === "gemini" ? "deny" : "block",
          reason: reasonText(verdict.by, verdict.reason),
        });
      if (verdict.kind === "context")
        return json({ hookSpecificOutput: { hookEventName: agentEvent, additionalContext: verdict.text } });
      return silent;
    case "Stop":
      // A refused stop: the agent goes on with `reason` as its instruction.
      if (verdict.kind === "block")
        return json({ decision: agent === "gemini" ? "deny" : "block", reason: verdict.reason });
      return silent;
    case "PreCompact":
      // Claude Code blocks compaction on exit 2; Codex and Gemini CLI cannot cancel one.
      if (verdict.kind === "block" && agent === "claude-code")
        return blocked(reasonText(verdict.by, verdict.reason));
      return silent;
    case "SessionStart":
      if (verdict.kind === "context")
        return json({ hookSpecificOutput: { hookEventName: agentEvent, additionalContext: verdict.text } });
      return silent;
    default:
      return silent;
  }
}

function preToolUse(agent: AgentName, agentEvent: string, verdict: HookVerdict): HookAnswer {
  if (verdict.kind !== "tool") return silent;
  const reason = reasonText(verdict.by, verdict.reason);
  if (agent === "gemini") return json({ decision: verdict.decision, reason });
  if (agent === "codex") {
    // Codex honours only deny here: allow is silence, and an ask would run the call.
    if (verdict.decision === "allow") return silent;
    const why =
      verdict.decision === "ask"
        ? `${reason} (Rein asks for a person's answer; a Codex hook cannot ask, so the call is denied)`
        : reason;
    return json({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: why,
      },
    });
  }
  return json({
    hookSpecificOutput: {
      hookEventName: agentEvent,
      permissionDecision: verdict.decision,
      permissionDecisionReason: reason,
    },
  });
}

function permissionRequest(agent: AgentName, verdict: HookVerdict): HookAnswer {
  // An ask leaves the agent's own dialog to the person in front of it.
  if (verdict.kind !== "tool" || verdict.decision === "ask") return silent;
  const decision =
    verdict.decision === "allow"
      ? { behavior: "allow" }
      : { behavior: "deny", message: reasonText(verdict.by, verdict.reason) };
  if (agent === "gemini") return silent;
  return json({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision } });
}

function postToolUse(agent: AgentName, agentEvent: string, verdict: HookVerdict): HookAnswer {
  if (verdict.kind === "context")
    return json({ hookSpecificOutput: { hookEventName: agentEvent, additionalContext: verdict.text } });
  if (verdict.kind !== "output") return silent;
  if (agent === "claude-code")
    return json({ hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: verdict.output } });
  // Codex 0.171's schema lists updatedMCPToolOutput, but its runtime refuses it ("PostToolUse hook
  // returned unsupported updatedMCPToolOutput", in its binary), as Gemini CLI has no such field:
  // no way to replace the output there, so the model is told not to use it.
  return json({
    decision: "block",
    reason:
      "Rein redacted this tool's output, but this agent cannot replace it: do not use the output above.",
  });
}
