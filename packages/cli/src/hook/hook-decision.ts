/**
 * One agent hook event decided by the project's Rein stack: tool events go
 * through `evaluateToolCall` (the harness's own pipeline, what `rein check`
 * and every run use) on the mapped Rein calls, a tool result through the
 * `toolResult` taps (redaction), a stop through `beforeStop`, a compaction
 * through `beforeCompact`.
 *
 * Invariants: several Rein calls for one agent call give the strictest
 * verdict (deny over ask over allow); an allow only the harness default gave
 * is no opinion (the agent's own permissions decide); an unmapped tool whose
 * input names a path or a command is denied unless a rule allows that tool
 * by name; a tap that throws or times out rejects (the caller blocks).
 */

import { resolve } from "node:path";
import type { AgentHarness, AssistantMessage, ToolCallFacts } from "@rein/harness";
import { evaluateToolCall, type ToolCallEvaluation, toAssistantMessage, traceContext } from "@rein/sdk";
import type { HookVerdict } from "./agent-protocols.js";
import type { HookInput } from "./hook-input.js";
import { protectedLeaf, protectedTarget } from "./protected-targets.js";
import { unknownToolStandIn } from "./stand-in-tools.js";
import { type MappedCall, mapToolCall, type ReinCall, stringLeaves } from "./tool-mapping.js";

/** One Rein call and what the stack said about it (for the audit). */
export interface DecidedCall {
  id: string;
  call: ReinCall;
  decision: "allow" | "deny" | "ask";
  by: string;
  reason: string;
  facts: Readonly<ToolCallFacts>;
}

export interface HookDecision {
  verdict: HookVerdict;
  /** The Rein calls a tool event was decided as (empty for other events). */
  calls: DecidedCall[];
}

const RANK = { allow: 0, ask: 1, deny: 2 } as const;
export const HOOK_BY = "rein-hook";

const callId = (input: HookInput, index: number): string => {
  const base = input.toolUseId ?? `${input.agent}-${Date.now().toString(36)}`;
  return index === 0 ? base : `${base}#${index + 1}`;
};

export async function decideToolEvent(harness: AgentHarness, input: HookInput): Promise<HookDecision> {
  const mapped: MappedCall = mapToolCall(
    input.agent,
    input.toolName as string,
    input.toolInput ?? {},
    input.mcpContext,
  );
  const calls: DecidedCall[] = [];
  for (const [index, call] of mapped.calls.entries()) {
    const id = callId(input, index);
    const evaluation: ToolCallEvaluation = await evaluateToolCall(
      harness,
      { name: call.name, args: call.args, id },
      { skipPermission: true, unregistered: "evaluate" },
    );
    const decided: DecidedCall = {
      id,
      call: { name: call.name, args: evaluation.args },
      decision: evaluation.decision,
      by: evaluation.by,
      reason: evaluation.reason,
      facts: evaluation.facts,
    };
    // No rule can allow the agent to take its own reins off: checked from every
    // directory the call could run in (the hook's cwd, the call's own workdir).
    const cwds = call.cwd === undefined ? [input.cwd] : [input.cwd, resolve(input.cwd, call.cwd)];
    const risk = harness.tools.find((tool) => tool.name === call.name)?.risk;
    const off =
      protectedTarget(harness, risk, evaluation.facts, cwds) ??
      (mapped.mapped && !call.name.startsWith("mcp__")
        ? undefined
        : protectedLeaf(harness, stringLeaves(call.args), cwds));
    if (off !== undefined)
      Object.assign(decided, {
        decision: "deny",
        by: `${HOOK_BY}:protected`,
        reason: `${off}; agents do not write it`,
      });
    calls.push(decided);
  }
  if (mapped.malformed !== undefined) {
    for (const one of calls)
      Object.assign(one, {
        decision: "deny",
        by: HOOK_BY,
        reason: `${input.agent}'s "${input.toolName}" input has a "${mapped.malformed}" Rein cannot read as the tool takes it, so it cannot be checked`,
      });
  }
  if (!mapped.mapped && mapped.unchecked !== undefined) {
    const only = calls[0] as DecidedCall;
    const allowedByRule = only.decision === "allow" && !only.by.startsWith("harness");
    if (!allowedByRule && only.decision !== "deny") {
      Object.assign(only, {
        decision: "deny",
        by: HOOK_BY,
        reason: `${input.agent}'s tool "${input.toolName}" is not one Rein maps, and its "${mapped.unchecked}" names something Rein cannot check; allow it by name with a rule if it is safe`,
      });
    }
  }
  // No run traces these decisions: a tracing plugin records them as the caller's (its TRACEPARENT).
  const trace = traceContext(harness);
  for (const one of calls) {
    trace.observeDecision({
      toolCallId: one.id,
      toolName: one.call.name,
      decision: one.decision,
      by: one.by,
      reason: one.reason,
      agent: input.agent,
    });
  }
  const strictest = calls.reduce((worst, one) => (RANK[one.decision] > RANK[worst.decision] ? one : worst));
  if (strictest.decision === "allow" && calls.every((one) => one.by.startsWith("harness")))
    return { verdict: { kind: "none" }, calls };
  return {
    verdict: { kind: "tool", decision: strictest.decision, by: strictest.by, reason: strictest.reason },
    calls,
  };
}

/** A string leaf of a tool response and where it sits (keys and indexes from the top). */
interface TextLeaf {
  at: (string | number)[];
  text: string;
}

/** Every string in a tool response, at any depth (MCP results nest text in content blocks). */
function textLeaves(value: unknown, at: (string | number)[] = [], depth = 0): TextLeaf[] {
  if (typeof value === "string") return [{ at, text: value }];
  if (depth > 32 || typeof value !== "object" || value === null) return [];
  if (Array.isArray(value))
    return value.flatMap((item, index) => textLeaves(item, [...at, index], depth + 1));
  return Object.entries(value as Record<string, unknown>).flatMap(([key, leaf]) =>
    textLeaves(leaf, [...at, key], depth + 1),
  );
}

function withLeaf(root: unknown, at: readonly (string | number)[], text: string): unknown {
  if (at.length === 0) return text;
  const [head, ...rest] = at as [string | number, ...(string | number)[]];
  const copy = (Array.isArray(root) ? [...root] : { ...(root as Record<string, unknown>) }) as Record<
    string | number,
    unknown
  >;
  copy[head] = withLeaf(copy[head], rest, text);
  return copy;
}

/**
 * A tool result through the `toolResult` taps (redaction), for every tool the agent
 * ran, mapped or not (a background command's output reaches the agent through
 * `BashOutput`, an MCP tool's through its own name). The agent's own output object
 * comes back complete, only its text rewritten, at any depth: Claude Code ignores a
 * partial `updatedToolOutput`.
 */
export async function decideToolResult(harness: AgentHarness, input: HookInput): Promise<HookDecision> {
  if (harness.hooks.toolResult.taps.length === 0) return { verdict: { kind: "none" }, calls: [] };
  const mapped = mapToolCall(input.agent, input.toolName as string, input.toolInput ?? {}, input.mcpContext);
  const call = mapped.calls[0] as ReinCall;
  const leaves = textLeaves(input.toolResponse);
  if (leaves.length === 0) return { verdict: { kind: "none" }, calls: [] };
  const tool =
    harness.tools.find((candidate) => candidate.name === call.name) ?? unknownToolStandIn(call.name);
  const signal = new AbortController().signal;
  const id = callId(input, 0);
  const context = harness.toolHookContext(signal, {
    id,
    name: call.name,
    args: call.args,
    risk: tool.risk,
    tool,
  });
  const payload = {
    content: leaves.map((leaf) => ({ type: "text" as const, text: leaf.text })),
    isError: false,
  };
  const result = (await harness.hooks.toolResult.promise(payload, context)) ?? payload;
  const texts = result.content.map((block) => (block.type === "text" ? block.text : undefined));
  const changed = leaves.some((leaf, index) => texts[index] !== leaf.text);
  if (!changed) return { verdict: { kind: "none" }, calls: [] };
  let output: unknown = input.toolResponse;
  for (const [index, leaf] of leaves.entries()) output = withLeaf(output, leaf.at, texts[index] ?? "");
  return { verdict: { kind: "output", output }, calls: [] };
}

/** The last answer the agent gave, as the assistant message `beforeStop` taps read. */
function lastMessage(input: HookInput): AssistantMessage {
  const text = typeof input.raw.last_assistant_message === "string" ? input.raw.last_assistant_message : "";
  return toAssistantMessage(text);
}

export async function decideStop(harness: AgentHarness, input: HookInput): Promise<HookDecision> {
  if (harness.hooks.beforeStop.taps.length === 0) return { verdict: { kind: "none" }, calls: [] };
  const decision = await harness.hooks.beforeStop.promise(
    { lastMessage: lastMessage(input), continuations: input.stopHookActive ? 1 : 0 },
    harness.hookContext(),
  );
  if (decision?.decision !== "continue") return { verdict: { kind: "none" }, calls: [] };
  const content = typeof decision.message === "string" ? decision.message : decision.message.content;
  const message =
    typeof content === "string"
      ? content
      : content.map((block) => (block.type === "text" ? block.text : "")).join("");
  const by = (decision as { by?: string }).by ?? "beforeStop";
  return { verdict: { kind: "block", by, reason: message }, calls: [] };
}

/** A prompt through the `beforeRun` taps: a block (a spent session budget, say) refuses it. */
export async function decidePrompt(harness: AgentHarness, input: HookInput): Promise<HookDecision> {
  if (harness.hooks.beforeRun.taps.length === 0 || input.prompt === undefined)
    return { verdict: { kind: "none" }, calls: [] };
  const payload = await harness.hooks.beforeRun.promise(
    { systemPrompt: "", messages: [{ role: "user", content: input.prompt, timestamp: Date.now() }] },
    harness.hookContext(),
  );
  if (payload?.block) {
    const by = (payload as { by?: string }).by ?? "beforeRun";
    return { verdict: { kind: "block", by, reason: payload.block.reason }, calls: [] };
  }
  return { verdict: { kind: "none" }, calls: [] };
}

export async function decideCompaction(harness: AgentHarness, input: HookInput): Promise<HookDecision> {
  if (harness.hooks.beforeCompact.taps.length === 0) return { verdict: { kind: "none" }, calls: [] };
  const trigger = input.raw.trigger === "manual" ? "manual" : "threshold";
  const decision = await harness.hooks.beforeCompact.promise(
    { trigger, tokensBefore: 0 },
    harness.hookContext(),
  );
  if (decision && "cancel" in decision) {
    const by = (decision as { by?: string }).by ?? "beforeCompact";
    return { verdict: { kind: "block", by, reason: decision.cancel.reason }, calls: [] };
  }
  return { verdict: { kind: "none" }, calls: [] };
}
