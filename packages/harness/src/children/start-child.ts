/**
 * A child agent: a harness over a child session of the same session tree, whose
 * reins are the parent's and can only tighten (issue 33; see README "Child agents").
 *
 * Invariants:
 * - the child's decision stack is the parent's at the moment the child starts:
 *   every tap of the tool hooks (`toolCall`, `toolGate`, `permissionAsk`,
 *   `toolResult`, `toolUpdate`) and of the request hooks (`beforeRequest`,
 *   `providerPayload`) is the parent's very tap (same function, same closure,
 *   same state), so a parent deny binds and a budget counted in a parent tap is
 *   the same budget; narrowing taps the caller adds to `child.hooks` can only add
 *   verdicts, and the gate's strictest-wins reduction never lets an allow beat a
 *   deny. The run-lifecycle hooks (`beforeRun`, `beforeStop`, `beforeCompact`,
 *   `beforeBranch`) belong to the parent's own run and are not inherited;
 * - the parent's default verdict and failure policy are the child's;
 * - the child has only tools the parent has active (a wider `activeTools` is an
 *   `invalid_argument` naming them), and an `ask` nobody answers is denied
 *   (never parked: a person cannot resume a child alone);
 * - every child event reaches the parent's listeners as a `child_event` (stream
 *   deltas excepted), so budgets and audit logs see what the child did.
 */
import type { Model } from "@earendil-works/pi-ai";
import { invalidArgument } from "../errors.js";
import type { ChildEventAgent, HarnessEvent } from "../events/event-types.js";
import type { DefaultToolVerdict, SystemPromptSource } from "../harness/live-config.js";
import type { AgentHarnessOptions } from "../harness/options.js";
import type { FailurePolicy } from "../hooks/create-hooks.js";
import type { HarnessHooks, HookName } from "../hooks/hook-table.js";
import type { AgentInfo, RequestOptions } from "../hooks/hook-types.js";
import type { RawTap } from "../hooks/tap-call.js";
import type { StreamFunction } from "../loop/loop-types.js";
import type { ThinkingLevel } from "../session/entries.js";
import type { Session } from "../session/session.js";
import type { AnyAgentTool } from "../tools.js";

/** The hooks a child takes from its parent (the rest are the parent's run's own). */
export const INHERITED_HOOKS: readonly HookName[] = [
  "toolCall",
  "toolGate",
  "permissionAsk",
  "toolResult",
  "toolUpdate",
  "beforeRequest",
  "providerPayload",
];

export interface ChildAgentOptions {
  /** The child's session (`childSession()` makes one beside the parent's). */
  session: Session;
  /** The parent's tool call that starts the child (the link in the session tree). */
  toolCallId: string;
  /** Names the child in its agent path: `task#1` gives `task#1 of run <parent run>`. */
  name: string;
  /**
   * The whole agent path instead (re-deciding a recorded child: `rein replay`, `rein
   * check`): what the record's decisions carry, so `by` reads the same.
   */
  path?: string;
  /** Default: the parent's model. */
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model?: Model<any>;
  thinkingLevel?: ThinkingLevel;
  /** Default: the parent's system prompt. */
  systemPrompt?: SystemPromptSource;
  /** A subset of the parent's active tools; default all of them except `excludeTools`. */
  activeTools?: readonly string[];
  /** Tools the child never gets (the `task` tool leaves itself out). */
  excludeTools?: readonly string[];
  /** Whether the parent's session grants answer the child's asks (the parent's config decides). Default false. */
  inheritGrants?: boolean;
  requestOptions?: RequestOptions;
  /** Bound on `beforeStop` continuations in the child. Default the harness's. */
  maxStopContinuations?: number;
}

/** What a parent harness hands its child (internal: `AgentHarness.startChild` fills it). */
export interface ParentPort {
  session: Session;
  hooks: HarnessHooks;
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  thinkingLevel: ThinkingLevel;
  tools: readonly AnyAgentTool[];
  activeToolNames: readonly string[];
  systemPrompt: SystemPromptSource;
  resources: Readonly<Record<string, unknown>>;
  defaultToolVerdict: DefaultToolVerdict;
  failurePolicy: FailurePolicy;
  streamFn: StreamFunction;
  cwd: string;
  decisionTrail: boolean;
  runId: string | undefined;
  agent: AgentInfo | undefined;
  emit(event: HarnessEvent): Promise<void>;
}

/** `task#1 of run r1`; a grandchild: `task#1 of task#2 of run r1`. */
export function agentPath(parent: Pick<ParentPort, "agent" | "runId" | "session">, name: string): string {
  if (typeof name !== "string" || !/^[^\s]+$/.test(name)) {
    throw invalidArgument(
      `startChild: name must be a word without spaces (e.g. "task#1"), not ${JSON.stringify(name)}`,
    );
  }
  const of =
    parent.agent?.path ??
    (parent.runId !== undefined ? `run ${parent.runId}` : `session ${parent.session.id}`);
  return `${name} of ${of}`;
}

/** The child's tools: the parent's active tools, narrowed; a wider list is refused naming what it adds. */
export function childTools(
  parent: Pick<ParentPort, "tools" | "activeToolNames">,
  options: ChildAgentOptions,
) {
  const excluded = new Set(options.excludeTools ?? []);
  const allowed = parent.activeToolNames.filter((name) => !excluded.has(name));
  let active = allowed;
  if (options.activeTools !== undefined) {
    if (!Array.isArray(options.activeTools))
      throw invalidArgument("startChild: activeTools must be an array of tool names");
    const wider = options.activeTools.filter((name) => !allowed.includes(name));
    if (wider.length > 0) {
      throw invalidArgument(
        `startChild: a child's tools can only narrow the parent's: ${wider.map((n) => JSON.stringify(n)).join(", ")} ${wider.length === 1 ? "is" : "are"} not active in the parent (active: ${allowed.join(", ") || "none"})`,
      );
    }
    active = [...new Set(options.activeTools)];
  }
  const tools = parent.tools.filter((tool) => active.includes(tool.name));
  return { tools, active };
}

/** The harness options of a child: the parent's, narrowed as `options` says. */
export function childHarnessOptions(
  parent: ParentPort,
  options: ChildAgentOptions,
  path: string,
): AgentHarnessOptions {
  const { tools, active } = childTools(parent, options);
  return {
    session: options.session,
    model: options.model ?? parent.model,
    thinkingLevel: options.thinkingLevel ?? parent.thinkingLevel,
    tools,
    activeTools: active,
    systemPrompt: options.systemPrompt ?? parent.systemPrompt,
    resources: { ...parent.resources },
    ...(options.requestOptions === undefined ? {} : { requestOptions: options.requestOptions }),
    cwd: parent.cwd,
    defaultToolVerdict: parent.defaultToolVerdict,
    onUnanswered: "deny",
    failurePolicy: parent.failurePolicy,
    streamFn: parent.streamFn,
    decisions: { trail: parent.decisionTrail },
    ...(options.maxStopContinuations === undefined
      ? {}
      : { maxStopContinuations: options.maxStopContinuations }),
    agent: {
      path,
      parentSessionId: parent.session.id,
      parentToolCallId: options.toolCallId,
      inheritGrants: options.inheritGrants === true,
    },
  };
}

/** Puts the parent's taps of every inherited hook on the child's hooks, in the parent's order. */
export function inheritTaps(parent: HarnessHooks, child: HarnessHooks): void {
  for (const name of INHERITED_HOOKS) {
    const from = parent[name] as unknown as { taps: RawTap[] };
    const to = child[name] as unknown as { taps: RawTap[] };
    to.taps = [...from.taps, ...to.taps];
  }
}

/**
 * Makes every tap registered on the child from now on a narrowing one: its `allow`
 * on `toolGate` or `permissionAsk` counts as no opinion. A child's own allow could
 * otherwise beat the parent's default verdict (an `ask` for writes, say) or answer
 * an ask the parent's permission stack would refuse; its deny and ask still count.
 */
export function narrowOnly(child: HarnessHooks): void {
  for (const name of ["toolGate", "permissionAsk"] as const) {
    const hook = child[name] as unknown as {
      intercept(interceptor: { register(tap: RawTap): RawTap }): void;
    };
    hook.intercept({ register: (tap) => ({ ...tap, fn: withoutAllow(tap) }) });
  }
}

const dropAllow = (answer: unknown) =>
  answer !== null && typeof answer === "object" && (answer as { decision?: unknown }).decision === "allow"
    ? undefined
    : answer;

// biome-ignore lint/complexity/noBannedTypes: tapable's own type for tap functions.
function withoutAllow(tap: RawTap): Function {
  const fn = tap.fn;
  if (tap.type === "async") {
    return (payload: unknown, context: unknown, callback: (error: unknown, result?: unknown) => void) =>
      fn(payload, context, (error: unknown, result?: unknown) =>
        callback(error, error ? undefined : dropAllow(result)),
      );
  }
  return (payload: unknown, context: unknown) => {
    const answer = fn(payload, context);
    return answer !== null && typeof (answer as { then?: unknown })?.then === "function"
      ? (answer as Promise<unknown>).then(dropAllow)
      : dropAllow(answer);
  };
}

/** Forwards the child's events to the parent as `child_event`s. Returns the unsubscribe function. */
export function forwardEvents(
  child: { subscribe(listener: (event: HarnessEvent) => Promise<void>): () => void },
  parent: ParentPort,
  agent: ChildEventAgent,
): () => void {
  return child.subscribe(async (event) => {
    if (event.type === "message_update") return;
    await parent.emit({ type: "child_event", agent, event });
  });
}
