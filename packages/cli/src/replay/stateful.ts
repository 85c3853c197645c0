/**
 * Replay with state: the configured stack runs a recorded session again through
 * the harness's own run loop, run by run, so every plugin builds its state as it
 * did (guard counters from `message_end` / `tool_decision` events and `beforeRun`,
 * grants and answers in order). Nothing is called and nothing executes:
 *
 * - the model is the record: each request is answered with the next recorded reply
 *   of the current run, usage included, so token and cost budgets count what was spent;
 * - every tool is replaced by a stand-in that returns the recorded result (same
 *   name, schema, risk and `inspect`, so the gates see the same facts);
 * - `permissionAsk` is answered first, as recorded (`askedBy` set: the recorded
 *   answer; `unanswered`: no answer, so the rest of the stack may answer); a session
 *   grant given with a recorded answer is appended again right there, so a call the
 *   current stack asks about that the record did not meets the same grants;
 * - the session is in memory, under the recorded session's id; retries and
 *   automatic compaction are off (their outcome is in the record already);
 * - nobody is asked: stdin never counts as a terminal during a replay.
 *
 * Invariant: a call's "now" comes from the `tool_decision` event the run emitted,
 * the same event a live run records; a call the replayed run never reached
 * (stopped earlier than recorded) is `not reached`.
 * Runs come from the user messages; a message a queue put in (steering, follow-up,
 * per the journal) is queued again after the same reply, so it stays in its run.
 * Limit (README): a run that failed at the provider and was retried replays up to
 * the failure.
 */
import type { AssistantMessageEvent, AssistantMessageEventStream, UserMessage } from "@earendil-works/pi-ai";
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";
import {
  type AnyAgentTool,
  type AssistantMessage,
  type DecisionRecord,
  type EventOf,
  SKILL_TOOL_NAME,
  Stage,
  type StreamFunction,
} from "@rein/harness";
import { Type } from "typebox";
import { type Agent, buildAgent } from "../agent/build-agent.js";
import type { GlobalOptions } from "../globals.js";
import { GRANT_ENTRY_TYPE, type RecordedRun, type RecordedSession, wasAsked } from "./recorded.js";

export interface ReplayedDecision {
  decision: DecisionRecord;
  args: Record<string, unknown>;
}

export interface StatefulOutcome {
  /** The decisions calls got in the replay, by tool call id, in order (a provider may reuse an id). */
  decisions: Map<string, ReplayedDecision[]>;
  /** Runs that asked the model for more replies than the record holds (1-based). */
  overran: number[];
  /**
   * Of those, runs the record shows stopped from outside the replies (aborted or
   * interrupted: by the user, or a plugin's stop): the replay cannot tell which, so
   * these are reported, not counted as a change.
   */
  stoppedInRecord: number[];
  /** The rules the stack declares (`<plugin>:<rule>`), for coverage. */
  declared: readonly string[];
}

const NO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** Streams one recorded reply as it was (usage and ids included). */
function streamOf(message: AssistantMessage): AssistantMessageEventStream {
  const stream = createAssistantMessageEventStream();
  queueMicrotask(() => {
    stream.push({ type: "start", partial: message });
    const end: AssistantMessageEvent =
      message.stopReason === "error" || message.stopReason === "aborted"
        ? { type: "error", reason: message.stopReason, error: message }
        : { type: "done", reason: message.stopReason === "pending" ? "stop" : message.stopReason, message };
    stream.push(end);
  });
  return stream;
}

/** The replies of the run being replayed, one per request. */
class RecordedReplies {
  #run: RecordedRun | undefined;
  #next = 0;
  overran = false;
  /** Queues a message as the recording's queue did (steer / follow-up). */
  inject: (queue: "steer" | "followUp", message: UserMessage) => void = () => undefined;

  startRun(run: RecordedRun): void {
    this.#run = run;
    this.#next = 0;
    this.overran = false;
  }

  readonly streamFn: StreamFunction = (model) => {
    const reply = this.#run?.replies[this.#next++];
    if (reply) {
      // A message the record shows after this reply is queued now: the harness puts it
      // in when this turn ends (steering) or when the agent would stop (follow-up).
      for (const item of this.#run?.injected ?? []) {
        if (item.afterReplies === this.#next) this.inject(item.queue, structuredClone(item.message));
      }
      return streamOf(structuredClone(reply));
    }
    this.overran = true;
    return streamOf({
      role: "assistant",
      content: [{ type: "text", text: "(replay: the record holds no further reply in this run)" }],
      api: model.api,
      provider: model.provider,
      model: model.id,
      usage: NO_USAGE,
      stopReason: "stop",
      timestamp: Date.now(),
    });
  };
}

/** A tool that returns the recorded result instead of running. */
function recordedTool(
  tool: AnyAgentTool,
  recorded: RecordedSession,
  onCall?: (args: Record<string, unknown>) => void,
): AnyAgentTool {
  const results = new Map(recorded.calls.map((call) => [call.toolCallId, call.result]));
  return {
    ...tool,
    execute: (args, context) => {
      onCall?.(args as Record<string, unknown>);
      const result = results.get(context.toolCallId);
      if (!result) {
        return { content: [{ type: "text", text: "(replay: no recorded result)" }], isError: true };
      }
      return { content: result.content, details: result.details, isError: result.isError };
    },
  };
}

/** A stand-in for a recorded tool the stack no longer has: the gates still decide its calls. */
function removedTool(name: string): AnyAgentTool {
  return {
    name,
    description: "(not registered in the current stack; replayed from the record)",
    parameters: Type.Object({}, { additionalProperties: true }),
    execute: () => ({ content: [{ type: "text", text: "not registered" }], isError: true }),
  };
}

export async function replayWithState(
  recorded: RecordedSession,
  header: Parameters<typeof buildAgent>[0]["ephemeralHeader"],
  globals: GlobalOptions,
): Promise<StatefulOutcome> {
  // A replay never prompts, even in a terminal: stdin never counts as one (as in
  // `rein mcp serve`), so an ask with no recorded answer gets the stack's own answer
  // without a person (a session grant, else a deny with its reason).
  Object.defineProperty(process.stdin, "isTTY", { value: false, configurable: true });
  const replies = new RecordedReplies();
  const agent: Agent = await buildAgent({
    cwd: globals.cwd,
    configPath: globals.config,
    ephemeral: true,
    modelOptional: true,
    ...(header ? { ephemeralHeader: header } : {}),
    streamFn: replies.streamFn,
  });
  const decisions = new Map<string, ReplayedDecision[]>();
  const overran: number[] = [];
  const stoppedInRecord: number[] = [];
  const declared = agent.host.plugins.flatMap((plugin) => plugin.rules);
  try {
    const { harness } = agent;
    harness.setRetrySettings({ enabled: false });
    harness.setCompactionSettings({ enabled: false });
    const known = new Set(harness.tools.map((tool) => tool.name));
    const removed = [...new Set(recorded.calls.map((call) => call.tool))].filter((name) => !known.has(name));
    // Rein's skill tool also activates the skill again, so its allowed-tools narrow as recorded.
    const activate = (args: { name?: unknown; arguments?: unknown }) => {
      if (typeof args.name !== "string" || !harness.skills.some((skill) => skill.name === args.name)) return;
      harness.activateSkill(args.name, typeof args.arguments === "string" ? args.arguments : undefined);
    };
    harness.setTools([
      ...harness.tools.map((tool) =>
        recordedTool(
          tool,
          recorded,
          tool.name === SKILL_TOOL_NAME && tool.owner === "rein" ? activate : undefined,
        ),
      ),
      ...removed.map((name) => recordedTool(removedTool(name), recorded)),
    ]);
    if (agent.loaded.config.tools?.active && removed.length > 0) {
      harness.setActiveTools([...harness.activeToolNames, ...removed]);
    }
    const answers = new Map(
      recorded.calls.flatMap((call) =>
        call.decision && wasAsked(call.decision) && call.decision.askedBy !== undefined
          ? [[call.toolCallId, call.decision] as const]
          : [],
      ),
    );
    harness.hooks.permissionAsk.tap({ name: "replay", stage: Stage.first }, (request, context) => {
      const answer = answers.get(request.call.id);
      if (!answer) return undefined;
      // A grant given with this answer is given back here, as the recording did.
      for (const data of recorded.grants.get(request.call.id) ?? []) {
        context.session.append({ type: "custom", customType: GRANT_ENTRY_TYPE, data });
      }
      return { decision: answer.decision, reason: answer.reason };
    });
    harness.on("tool_decision", (event: EventOf<"tool_decision">) => {
      const { type: _type, toolCallId, toolName: _name, args, ...decision } = event;
      const replayed = { decision, args: args as Record<string, unknown> };
      decisions.set(toolCallId, [...(decisions.get(toolCallId) ?? []), replayed]);
    });
    replies.inject = (queue, message) =>
      queue === "steer" ? harness.steer(message) : harness.followUp(message);
    for (const [index, run] of recorded.runs.entries()) {
      replies.startRun(run);
      for (const message of run.nextTurn) harness.nextTurn(structuredClone(message));
      const skill =
        run.skill && harness.skills.some((s) => s.name === run.skill?.name) ? run.skill : undefined;
      // A run that stopped after its tools (rein mcp serve) replays so: no request for a closing reply.
      const options = run.stopAfterTools ? { stopAfterTools: true } : undefined;
      await (skill
        ? harness.skill(skill.name, skill.args)
        : harness.prompt(structuredClone(run.prompt), options));
      await harness.waitForIdle();
      // Injections a shorter replayed run never took must not leak into the next run.
      if (harness.queued("steer") + harness.queued("followUp") > 0)
        harness.abort("replay: end of the recorded run");
      if (!replies.overran) continue;
      if (run.status === "aborted" || run.status === "interrupted") stoppedInRecord.push(index + 1);
      else overran.push(index + 1);
    }
  } finally {
    await agent.dispose();
  }
  return { decisions, overran, stoppedInRecord, declared };
}
