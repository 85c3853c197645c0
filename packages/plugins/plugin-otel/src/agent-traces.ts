/**
 * Routes a harness's events to the trace of the agent they belong to: the
 * harness's own runs, and each child agent (`child_event`, from `startChild` /
 * the `task` tool), whose `invoke_agent` span hangs under the parent's
 * `execute_tool` span of the call that started it.
 *
 * Invariants: a child's trace exists from its first event to its run's end, and
 * is ended when the parent's run ends (an aborted parent leaves no child span
 * open); a tool call's `traceparent` is looked up in every agent, since a child's
 * tools (an MCP call) ask the same trace context as the parent's.
 */
import { SpanKind } from "@opentelemetry/api";
import type { ChildEventAgent, HarnessEvent, ObservedDecision } from "@rein/sdk";
import { ATTR, OPERATION, REIN } from "./conventions.js";
import { RunTrace, type RunTraceOptions, remoteParent } from "./run-trace.js";

export type TraceSettings = Omit<RunTraceOptions, "parent" | "agentPath" | "sessionId">;

export class AgentTraces {
  private readonly root: RunTrace;
  private readonly children = new Map<string, RunTrace>();

  constructor(
    private readonly settings: TraceSettings,
    sessionId: () => string,
    /** The caller's `traceparent` (a host, `TRACEPARENT`), if any. */
    private readonly parent: () => string | undefined,
  ) {
    this.root = new RunTrace({
      ...settings,
      sessionId,
      parent: () => {
        const traceparent = this.parent();
        return traceparent === undefined ? undefined : remoteParent(traceparent);
      },
    });
  }

  /** The `traceparent` of a tool call's span in any agent, else of the harness's run. */
  traceparentFor(toolCallId: string): string | undefined {
    const own = this.root.openToolSpan(toolCallId);
    if (own) return own.traceparent;
    for (const child of this.children.values()) {
      const span = child.openToolSpan(toolCallId);
      if (span) return span.traceparent;
    }
    return this.root.runSpan?.traceparent;
  }

  handle(event: HarnessEvent): void {
    if (event.type === "child_event") {
      this.childEvent(event.agent, event.event);
      return;
    }
    if (event.type === "agent_end") this.endChildren(event.status);
    route(this.root, event);
  }

  /**
   * A decision made outside a run (`rein hook` deciding another agent's call): one
   * `apply_guardrail` span under the caller's trace (its `TRACEPARENT`), if any.
   */
  outsideRun(decision: ObservedDecision): void {
    const attributes = {
      [ATTR.operationName]: OPERATION.applyGuardrail,
      [ATTR.toolName]: decision.toolName,
      [ATTR.toolCallId]: decision.toolCallId,
      [REIN.decision]: decision.decision,
      [REIN.decisionBy]: decision.by,
      [REIN.decisionReason]: this.settings.mask(decision.reason),
      ...(decision.agent !== undefined ? { [REIN.hookAgent]: decision.agent } : {}),
    };
    const traceparent = this.parent();
    this.settings.spans
      .start(
        `${OPERATION.applyGuardrail} ${decision.toolName}`,
        { kind: SpanKind.INTERNAL, attributes },
        traceparent === undefined ? undefined : remoteParent(traceparent),
      )
      .end();
  }

  /** Ends everything open (the plugin is being disposed). */
  endAll(status: string, reason: string): void {
    this.endChildren(status, reason);
    this.root.endRun(status, reason);
  }

  private childEvent(agent: ChildEventAgent, event: HarnessEvent): void {
    let child = this.children.get(agent.sessionId);
    if (!child) {
      if (event.type !== "agent_start") return; // a child's trace starts with its run
      child = new RunTrace({
        ...this.settings,
        agentName: agent.path.split("#")[0] || this.settings.agentName,
        agentPath: agent.path,
        sessionId: () => agent.sessionId,
        parent: () => this.root.openToolSpan(agent.toolCallId) ?? this.root.runSpan,
      });
      this.children.set(agent.sessionId, child);
    }
    route(child, event);
    if (event.type === "agent_end") this.children.delete(agent.sessionId);
  }

  private endChildren(status: string, reason?: string): void {
    for (const child of this.children.values())
      child.endRun(status === "completed" ? "aborted" : status, reason);
    this.children.clear();
  }
}

function route(trace: RunTrace, event: HarnessEvent): void {
  switch (event.type) {
    case "agent_start":
      trace.runStarted(event);
      return;
    case "turn_start":
      trace.turnStarted(event);
      return;
    case "message_end":
      if (event.message.role === "assistant") trace.assistantMessage(event.message);
      return;
    case "retry":
      trace.retry(event);
      return;
    case "tool_decision":
      trace.decided(event);
      return;
    case "tool_parked":
      trace.parked(event);
      return;
    case "tool_execution_start":
      trace.executionStarted(event);
      return;
    case "tool_execution_end":
      trace.executionEnded(event);
      return;
    case "plugin_error":
      trace.pluginError(event);
      return;
    case "abort":
      trace.aborted(event);
      return;
    case "agent_end":
      trace.runEnded(event);
      return;
    default:
      return;
  }
}

/** The event types a trace needs (the plugin listens to these only; stream deltas never). */
export const TRACED_EVENTS = [
  "agent_start",
  "turn_start",
  "message_end",
  "retry",
  "tool_decision",
  "tool_parked",
  "tool_execution_start",
  "tool_execution_end",
  "plugin_error",
  "abort",
  "agent_end",
  "child_event",
] as const satisfies readonly HarnessEvent["type"][];
