/**
 * Parking a run and resuming it (durable approvals): what a run writes when an `ask`
 * nobody answered parks, and how a resumed run answers the parked calls.
 *
 * Invariants:
 * - The park is journaled (`tool_park`, with the final arguments and their hash) before
 *   `tool_parked` is emitted and before the run can end `parked`.
 * - A resumed call executes only if a person's `allow` names the park's hash, the park's
 *   arguments still hash to it, they still pass the tool's schema unchanged and the tool
 *   can inspect them; anything else is a deny by `harness` saying why. `toolCall` rewrites
 *   and `toolGate` are not run again: the person's verdict stands for that exact call.
 * - A resume needs every parked open call answered: a pending one refuses (`parked`).
 */
import type { JsonObject, ToolCall } from "@earendil-works/pi-ai";
import { describeError, invalidArgument, parkedError } from "../errors.js";
import type { HarnessEvent, ParkedCall } from "../events/event-types.js";
import type { PluginDriver } from "../hooks/plugin-driver.js";
import { validatedArgs } from "../loop/frozen-args.js";
import type { ToolCallPlan } from "../loop/loop-types.js";
import { type ApprovalRecord, callHash, openParks, type ParkRecord } from "../session/approvals.js";
import type { AssistantMessage, DecisionRecord } from "../session/entries.js";
import type { Session } from "../session/session.js";
import { openToolCalls } from "../session/tool-call-state.js";
import { type AnyAgentTool, failureText, type ViewOptions, viewToolCall } from "../tools.js";
import { durableId, type SessionWriter } from "./session-writer.js";

/** A parked call and the person's answer to it. */
export interface ApprovedCall {
  park: ParkRecord;
  answer: ApprovalRecord;
}

/** What a resumed run starts from (see `executeResume`). */
export interface ResumeState {
  message: AssistantMessage;
  openCallIds: string[];
  answers: Map<string, ApprovedCall>;
  /** The run that parked (its skills stay active in the resumed one). */
  runId?: string;
}

export async function parkCall(
  writer: SessionWriter,
  runId: string,
  call: ToolCall,
  plan: Extract<ToolCallPlan, { action: "park" }>,
  emit: (event: HarnessEvent) => Promise<void>,
): Promise<ParkedCall> {
  const parked: ParkedCall = {
    approvalId: durableId(),
    toolCallId: call.id,
    toolName: call.name,
    args: plan.args,
    argsHash: callHash(call.name, plan.args),
    askedBy: plan.askedBy,
    reason: plan.reason,
  };
  writer.journal({ event: "tool_park", runId, ...parked });
  await emit({ type: "tool_parked", ...parked });
  return parked;
}

/**
 * The resume state of `session`: its active branch must end in an assistant message
 * whose open tool calls include parked ones, every one of them answered.
 */
export function resumeStateOf(session: Session): ResumeState {
  const parks = openParks(session);
  if (parks.length === 0) {
    throw invalidArgument(`cannot resume session ${session.id}: it has no parked tool calls`);
  }
  const pending = parks.filter((found) => found.answer === undefined).map(({ park }) => park.approvalId);
  if (pending.length > 0) {
    throw parkedError(
      `cannot resume session ${session.id}: approval ${pending.join(", ")} is still pending (rein approvals approve|deny)`,
    );
  }
  const branch = session.branch();
  const open = openToolCalls(branch);
  const message = [...branch]
    .reverse()
    .find((entry) => entry.type === "message" && entry.message.role === "assistant");
  if (message?.type !== "message" || message.message.role !== "assistant") {
    throw invalidArgument(`cannot resume session ${session.id}: no assistant message to resume`);
  }
  const answers = new Map<string, ApprovedCall>();
  for (const { park, answer } of parks)
    answers.set(park.toolCallId, { park, answer: answer as ApprovalRecord });
  const runId = parks[0]?.park.runId;
  return {
    message: message.message,
    openCallIds: open.map((call) => call.id),
    answers,
    ...(runId === undefined ? {} : { runId }),
  };
}

/** The plan for a parked call a person answered. Never throws: a problem is a deny. */
export async function answerParkedCall(
  { park, answer }: ApprovedCall,
  call: ToolCall,
  tool: AnyAgentTool,
  driver: Pick<PluginDriver, "run">,
  inspection: ViewOptions,
  emit: (event: HarnessEvent) => Promise<void>,
): Promise<ToolCallPlan> {
  const person: DecisionRecord = {
    decision: answer.decision,
    by: answer.by,
    reason: answer.reason,
    askedBy: park.askedBy,
    approvalId: park.approvalId,
  };
  const refuse = async (record: DecisionRecord): Promise<ToolCallPlan> => {
    await emit({
      type: "tool_decision",
      toolCallId: call.id,
      toolName: call.name,
      args: park.args,
      ...record,
    });
    const text = `Tool call denied by ${record.by}: ${record.reason}`;
    return {
      action: "refuse",
      result: { content: [{ type: "text", text }], isError: true },
      decision: record,
    };
  };
  if (answer.decision === "deny") return refuse(person);
  const mismatch = (why: string) =>
    refuse({
      decision: "deny",
      by: "harness",
      reason: why,
      askedBy: park.askedBy,
      approvalId: park.approvalId,
    });
  const hash = callHash(call.name, park.args);
  if (park.toolName !== call.name || hash !== park.argsHash || hash !== answer.argsHash) {
    return mismatch(
      `approval ${park.approvalId} does not match this call: approved ${answer.argsHash}, the call is ${hash}; not run`,
    );
  }
  let args: Record<string, unknown>;
  try {
    args = validatedArgs(tool, { ...call, arguments: park.args as JsonObject });
  } catch (error) {
    return mismatch(`the approved arguments no longer fit the tool: ${describeError(error)}`);
  }
  if (callHash(call.name, args) !== hash) {
    return mismatch("the approved arguments would change on validation; not run");
  }
  let view: Awaited<ReturnType<typeof viewToolCall>>;
  try {
    view = await viewToolCall(driver, tool, call.id, args, inspection);
  } catch (error) {
    return mismatch(`could not inspect the approved arguments: ${failureText(error)}`);
  }
  await emit({ type: "tool_decision", toolCallId: call.id, toolName: call.name, args, ...person });
  return { action: "execute", view, decision: person };
}
