/**
 * `rein replay` of the child agents' calls: each child session's recorded calls,
 * re-decided by today's stack as a child of it - the parent's taps plus today's
 * narrowing of the agent config the child ran as (`childConfigs`; the record names
 * it in the `task` result), under the recorded agent path, so `by` reads as the
 * record's. Each child call is decided alone (like `--isolated`): a child's run is
 * not replayed through a loop.
 */
import { type AgentHarness, type Session, startChild } from "@rein/harness";
import { childConfigs, evaluateToolCall } from "@rein/sdk";
import type { Agent } from "../agent/build-agent.js";
import { ChildSessions } from "../export/child-sessions.js";
import { readRecorded, recordedVerdict } from "./recorded.js";

export interface ChildReplayLine {
  agent: string;
  childSessionId: string;
  entryId: string;
  toolCallId: string;
  tool: string;
  args: unknown;
  recorded: ReturnType<typeof recordedVerdict>;
  recordedBy?: string;
  recordedOutcome?: "allow" | "deny";
  now: "allow" | "ask" | "deny";
  by: string;
  reason: string;
  changed: boolean;
}

/** The agent config a child ran as: the `agent` of its `task` result, if the record has one. */
function configName(parent: Session, toolCallId: string): string | undefined {
  for (const entry of parent.entries()) {
    if (entry.type !== "message" || entry.message.role !== "toolResult") continue;
    if (entry.message.toolCallId !== toolCallId) continue;
    const agent = (entry.message.details as { agent?: unknown } | undefined)?.agent;
    return typeof agent === "string" ? agent : undefined;
  }
  return undefined;
}

/** The parent's tool call ids, in call order. */
function callOrder(parent: Session): string[] {
  return readRecorded(parent).calls.map((call) => call.toolCallId);
}

export async function childReplayLines(parent: Session, agent: Agent): Promise<ChildReplayLine[]> {
  const lines: ChildReplayLine[] = [];
  const children = new ChildSessions(parent);
  try {
    for (const toolCallId of callOrder(parent)) {
      for (const child of children.of(toolCallId)) {
        const name = child.link.agentPath.split(" ")[0] as string;
        const config = configName(parent, toolCallId);
        const start = { toolCallId, name, path: child.link.agentPath };
        const registered = config === undefined ? undefined : childConfigs(agent.harness).get(config);
        const harness: AgentHarness = registered ? registered.start(start) : startChild(agent.harness, start);
        try {
          for (const call of readRecorded(child.session).calls) {
            const evaluation = await evaluateToolCall(
              harness,
              { name: call.tool, args: call.args, id: call.toolCallId },
              { skipPermission: true },
            );
            const recorded = recordedVerdict(call.decision);
            const line: ChildReplayLine = {
              agent: child.link.agentPath,
              childSessionId: child.session.id,
              entryId: call.entryId,
              toolCallId: call.toolCallId,
              tool: call.tool,
              args: call.args,
              recorded,
              now: evaluation.decision,
              by: evaluation.by,
              reason: evaluation.reason,
              changed: recorded !== "unknown" && recorded !== evaluation.decision,
            };
            if (call.decision?.by) line.recordedBy = call.decision.by;
            if (call.decision && recorded === "ask") line.recordedOutcome = call.decision.decision;
            lines.push(line);
          }
        } finally {
          await harness.close();
          harness.session.close();
        }
      }
    }
  } finally {
    children.close();
  }
  return lines;
}
