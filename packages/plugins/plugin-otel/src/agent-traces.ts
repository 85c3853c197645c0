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
import type { ChildEventAgent, HarnessEvent } from "@rein/sdk";
import { RunTrace, type RunTraceOptions, remoteParent } from "./run-trace.js";

export type TraceSettings = Omit<RunTraceOptions, "parent" | "agentPath" | "sessionId">;

export class AgentTraces {
  private readonly root: RunTrace;
  private readonly children = new Map<string, RunTrace>();

  constructor(
    private readonly settings: TraceSettings,
    sessionId: () => string,
    /** The caller's `traceparent` (a host, `TRACEPARENT`), if any. */
    parent: () => string | undefined,
  ) {
    this.root = new RunTrace({
      ...settings,
      sessionId,
      parent: () => {
        const traceparent = parent();
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
      return trace.runStarted(event);
    case "turn_start":
      return trace.turnStarted(event);
    case "message_end":
      if (event.message.role === "assistant") trace.assistantMessage(event.message);
      return;
    case "retry":
      return trace.retry(event);
    case "tool_decision":
      return trace.decided(event);
    case "tool_parked":
      return trace.parked(event);
    case "tool_execution_start":
      return trace.executionStarted(event);
    case "tool_execution_end":
      return trace.executionEnded(event);
    case "plugin_error":
      return trace.pluginError(event);
    case "abort":
      return trace.aborted(event);
    case "agent_end":
      return trace.runEnded(event);
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
