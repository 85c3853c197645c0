/**
 * `rein replay <session>`: every recorded tool call of a session through the
 * current config's `toolCall` + `toolGate` stack, with no model and no tool
 * executed. Exit 1 when any verdict changed, so CI can guard policy changes.
 * Verdicts are compared at the gate: a recorded ask (answered, or denied because
 * nobody answered) is `ask`, as replay's own `skipPermission` evaluation is.
 */
import type { DecisionRecord } from "@rein/harness";
import { evaluateToolCall } from "@rein/sdk";
import { type Agent, inspectionAgent } from "../agent/build-agent.js";
import { ExitCode } from "../errors.js";
import type { GlobalOptions } from "../program.js";
import { reserveStdout } from "../ui/json-stdout.js";
import { shorten, terminal } from "../ui/terminal.js";
import { openReadOnly } from "./session-access.js";

type Verdict = "allow" | "ask" | "deny" | "unknown";

export interface ReplayLine {
  index: number;
  entryId: string;
  toolCallId: string;
  tool: string;
  args: unknown;
  recorded: Verdict;
  recordedBy?: string;
  /** For a recorded ask: what the answer (or its absence) made of it. */
  recordedOutcome?: "allow" | "deny";
  now: Verdict;
  by: string;
  reason: string;
  changed: boolean;
}

/** What sessions recorded before `unanswered` existed said in the reason instead. */
const UNANSWERED_SUFFIX = "(asked, but no permission handler answered: denied)";

function wasAsked(decision: DecisionRecord): boolean {
  return (
    decision.askedBy !== undefined ||
    decision.unanswered === true ||
    (decision.decision === "deny" && decision.reason.endsWith(UNANSWERED_SUFFIX))
  );
}

/** The gate-level verdict a recorded result shows: any ask, answered or not, counts as `ask`. */
function recordedVerdict(decision: DecisionRecord | undefined): Verdict {
  if (!decision) return "unknown";
  return wasAsked(decision) ? "ask" : decision.decision;
}

export async function replayCommand(
  id: string,
  options: { json?: boolean },
  globals: GlobalOptions,
): Promise<number> {
  const session = await openReadOnly(id, globals);
  // Plugins load and gates run with stdout reserved: their console output goes to stderr.
  const json = options.json ? reserveStdout() : undefined;
  let agent: Agent;
  try {
    agent = await inspectionAgent(globals);
  } catch (error) {
    json?.release();
    session.close();
    throw error;
  }
  const term = terminal();
  const lines: ReplayLine[] = [];
  try {
    const decisions = new Map<string, DecisionRecord | undefined>();
    for (const entry of session.entries()) {
      if (entry.type === "message" && entry.message.role === "toolResult") {
        decisions.set(
          entry.message.toolCallId,
          "decision" in entry.message ? entry.message.decision : undefined,
        );
      }
    }
    for (const entry of session.entries()) {
      if (entry.type !== "message" || entry.message.role !== "assistant") continue;
      for (const block of entry.message.content) {
        if (block.type !== "toolCall") continue;
        const evaluation = await evaluateToolCall(
          agent.harness,
          { name: block.name, args: block.arguments, id: block.id },
          { skipPermission: true },
        );
        const recorded = recordedVerdict(decisions.get(block.id));
        const line: ReplayLine = {
          index: lines.length + 1,
          entryId: entry.id,
          toolCallId: block.id,
          tool: block.name,
          args: block.arguments,
          recorded,
          now: evaluation.decision,
          by: evaluation.by,
          reason: evaluation.reason,
          changed: recorded !== "unknown" && recorded !== evaluation.decision,
        };
        const record = decisions.get(block.id);
        if (record?.by) line.recordedBy = record.by;
        if (record && recorded === "ask") line.recordedOutcome = record.decision;
        lines.push(line);
      }
    }
  } finally {
    session.close();
    try {
      await agent.dispose();
    } finally {
      json?.release();
    }
  }
  const changed = lines.filter((line) => line.changed).length;
  if (options.json) {
    for (const line of lines) term.out.write(`${JSON.stringify(line)}\n`);
  } else {
    const { co } = term;
    for (const line of lines) {
      const mark = line.changed ? co.red(co.bold("CHANGED ")) : "        ";
      term.out.write(
        `${mark}#${line.index} ${co.bold(line.tool)} ${shorten(line.args, 50)}  recorded ${line.recorded}${line.recordedOutcome ? ` (then ${line.recordedOutcome})` : ""} → now ${line.now === "deny" ? co.red(line.now) : line.now} by ${line.by}: ${shorten(line.reason, 80)}\n`,
      );
    }
    term.err.write(
      `${lines.length} tool call${lines.length === 1 ? "" : "s"} replayed, ${changed} changed\n`,
    );
  }
  return changed > 0 ? ExitCode.failed : ExitCode.ok;
}
