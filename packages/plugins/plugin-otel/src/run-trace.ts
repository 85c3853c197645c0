/**
 * Harness events to spans, one harness at a time (a harness runs one run at a
 * time):
 *
 *   invoke_agent <agent>            agent_start .. agent_end
 *   ├─ chat <model>                 turn_start .. the assistant's message_end
 *   └─ execute_tool <tool>          first decision .. tool_execution_end (or the refusal)
 *      └─ apply_guardrail <tool>    the call's decision: verdict, by, rule, reason
 *
 * Invariants: only listens (it is fed events, never asked to decide); every span
 * it starts is ended by the run's end at the latest, so an aborted or failed run
 * leaves no span open; tool arguments, results and reasons pass the harness's
 * text masks before they are recorded, and arguments and results only when
 * `captureContent` is on.
 */
import { type Attributes, SpanKind } from "@opentelemetry/api";
import type { AssistantMessage, EventOf, ToolResult } from "@rein/sdk";
import { ATTR, finishReason, OPERATION, providerName, REIN } from "./conventions.js";
import { now as clock, type Millis, type ParentRef, type SpanHandle, type SpanRecorder } from "./span-ops.js";

export interface RunTraceOptions {
  /** Where spans and histogram values are recorded (replayed on the telemetry worker). */
  spans: SpanRecorder;
  /** Record histogram values too. */
  metrics: boolean;
  agentName: string;
  captureContent: boolean;
  maxContentLength: number;
  /** A decision as an `apply_guardrail` child span, or as an event of that name on the tool's span. */
  decisions: "span" | "event";
  /** The harness's text masks (plugin-redact), applied to everything recorded as text. */
  mask(text: string): string;
  /** The session the runs belong to (`gen_ai.conversation.id`). */
  sessionId(): string;
  /** The live model: provider and id for the request attributes. */
  model(): { provider: string; id: string };
  /** Where runs hang: a remote caller's span, a parent agent's tool span, or nowhere (a root). */
  parent(): ParentRef;
  /** Set for a child agent: its path (`task#1 of run r1`), recorded as `rein.agent.path`. */
  agentPath?: string;
}

interface ToolSpan {
  span: SpanHandle;
  started: Millis;
  executing?: Millis;
}

/** A W3C `traceparent` (already checked by the SDK's `isTraceparent`) as a remote parent. */
export const remoteParent = (traceparent: string): ParentRef => {
  const [, traceId, spanId, flags] = traceparent.split("-") as [string, string, string, string];
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16) };
};

const MCP_TOOL = /^mcp__/;

const textOf = (result: ToolResult): string =>
  result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");

/** `policy:rules[2]` → `rules[2]`; `harness` → undefined. */
const ruleOf = (by: string): string | undefined => {
  const at = by.indexOf(":");
  return at < 0 ? undefined : by.slice(at + 1);
};

export class RunTrace {
  private agent: SpanHandle | undefined;
  private runStartedAt = 0;
  private chat: { span: SpanHandle; started: Millis; model: { provider: string; id: string } } | undefined;
  /** Where the next decision's guardrail span starts: the end of the last decision or message. */
  private checkpoint = 0;
  private readonly tools = new Map<string, ToolSpan>();

  constructor(private readonly options: RunTraceOptions) {}

  /** The open span of a tool call of this agent, if any. */
  openToolSpan(toolCallId: string): SpanHandle | undefined {
    return this.tools.get(toolCallId)?.span;
  }

  /** The open span of the current run, if any. */
  get runSpan(): SpanHandle | undefined {
    return this.agent;
  }

  runStarted(event: EventOf<"agent_start">): void {
    this.endRun("error", "a new run started before the last one ended");
    const model = this.options.model();
    const parent = this.options.parent();
    this.runStartedAt = clock();
    this.agent = this.options.spans.start(
      `${OPERATION.invokeAgent} ${this.options.agentName}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          [ATTR.operationName]: OPERATION.invokeAgent,
          [ATTR.agentName]: this.options.agentName,
          [ATTR.conversationId]: this.options.sessionId(),
          [ATTR.providerName]: providerName(model.provider),
          [ATTR.requestModel]: model.id,
          [REIN.runId]: event.runId,
          ...(this.options.agentPath !== undefined ? { [REIN.agentPath]: this.options.agentPath } : {}),
        },
      },
      parent,
    );
  }

  turnStarted(event: EventOf<"turn_start">): void {
    this.endChat();
    const model = this.options.model();
    const started = clock();
    const span = this.options.spans.start(
      `${OPERATION.chat} ${model.id}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR.operationName]: OPERATION.chat,
          [ATTR.providerName]: providerName(model.provider),
          [ATTR.requestModel]: model.id,
          [REIN.turnIndex]: event.turnIndex,
        },
        time: started,
      },
      this.agent,
    );
    this.chat = { span, started, model };
  }

  assistantMessage(message: AssistantMessage): void {
    const chat = this.chat;
    this.chat = undefined;
    this.checkpoint = clock();
    if (!chat) return;
    const { span, model } = chat;
    const usage = message.usage;
    const attributes: Attributes = {
      [ATTR.responseModel]: message.responseModel ?? message.model,
      [ATTR.finishReasons]: [finishReason(message.stopReason)],
      [ATTR.inputTokens]: usage.input,
      [ATTR.outputTokens]: usage.output,
    };
    if (message.responseId !== undefined) attributes[ATTR.responseId] = message.responseId;
    if (usage.cacheRead > 0) attributes[ATTR.cacheReadTokens] = usage.cacheRead;
    if (usage.cacheWrite > 0) attributes[ATTR.cacheWriteTokens] = usage.cacheWrite;
    if (usage.reasoning !== undefined) attributes[ATTR.reasoningTokens] = usage.reasoning;
    span.setAttributes(attributes);
    const metricAttributes: Attributes = {
      [ATTR.operationName]: OPERATION.chat,
      [ATTR.providerName]: providerName(model.provider),
      [ATTR.requestModel]: model.id,
      [ATTR.responseModel]: message.responseModel ?? message.model,
    };
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      const type = message.stopReason === "aborted" ? "aborted" : "model_error";
      span.setAttribute(ATTR.errorType, type);
      span.fail(this.cut(message.errorMessage ?? type));
      metricAttributes[ATTR.errorType] = type;
    } else if (this.options.metrics) {
      // Two values (input, output); the worker adds `gen_ai.token.type` to each.
      this.options.spans.tokens(usage.input, usage.output, metricAttributes);
    }
    if (this.options.metrics) {
      this.options.spans.duration((this.checkpoint - chat.started) / 1000, metricAttributes);
    }
    span.end(this.checkpoint);
  }

  retry(event: EventOf<"retry">): void {
    (this.chat?.span ?? this.agent)?.addEvent("rein.retry", {
      "rein.retry.attempt": event.attempt,
      "rein.retry.max_attempts": event.maxAttempts,
      "rein.retry.delay_ms": event.delayMs,
      "rein.retry.error": this.cut(event.errorMessage),
    });
  }

  decided(event: EventOf<"tool_decision">): void {
    const now = clock();
    const tool = this.toolSpan(event.toolCallId, event.toolName, event.args, this.checkpoint || now);
    this.guardrail(tool, event.toolName, this.decisionAttributes(event), now);
    if (event.decision === "deny") {
      tool.span.setAttributes({ [REIN.decision]: "deny", [ATTR.errorType]: "tool_denied" });
      tool.span.fail(this.cut(`denied by ${event.by}: ${event.reason}`));
      this.endTool(event.toolCallId, now);
    } else {
      tool.span.setAttribute(REIN.decision, event.decision);
    }
  }

  parked(event: EventOf<"tool_parked">): void {
    const now = clock();
    const tool = this.toolSpan(event.toolCallId, event.toolName, event.args, this.checkpoint || now);
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.applyGuardrail,
      [ATTR.toolCallId]: event.toolCallId,
      [REIN.decision]: "park",
      [REIN.decisionBy]: event.askedBy,
      [REIN.decisionReason]: this.cut(event.reason),
      [REIN.approvalId]: event.approvalId,
    };
    const rule = ruleOf(event.askedBy);
    if (rule !== undefined) attributes[REIN.decisionRule] = rule;
    this.guardrail(tool, event.toolName, attributes, now);
    tool.span.setAttribute(REIN.decision, "park");
    this.endTool(event.toolCallId, now);
  }

  executionStarted(event: EventOf<"tool_execution_start">): void {
    const at = clock();
    const tool = this.toolSpan(event.toolCallId, event.toolName, event.args, at);
    tool.executing = at;
  }

  executionEnded(event: EventOf<"tool_execution_end">): void {
    const tool = this.tools.get(event.toolCallId);
    if (!tool) return;
    const now = clock();
    if (this.options.captureContent) tool.span.setAttribute(ATTR.toolResult, this.cut(textOf(event.result)));
    const metricAttributes: Attributes = {
      [ATTR.operationName]: OPERATION.executeTool,
      [ATTR.toolName]: event.toolName,
    };
    if (event.isError) {
      tool.span.setAttribute(ATTR.errorType, "tool_error");
      tool.span.fail(this.cut(textOf(event.result)));
      metricAttributes[ATTR.errorType] = "tool_error";
    }
    if (this.options.metrics) {
      this.options.spans.duration((now - (tool.executing ?? tool.started)) / 1000, metricAttributes);
    }
    this.endTool(event.toolCallId, now);
  }

  pluginError(event: EventOf<"plugin_error">): void {
    const span = (event.toolCallId ? this.tools.get(event.toolCallId)?.span : undefined) ?? this.agent;
    span?.addEvent("rein.plugin_error", {
      "rein.plugin": event.plugin,
      "rein.hook": event.hook,
      "rein.error.code": event.code,
      "rein.error.message": this.cut(event.message),
    });
  }

  aborted(event: EventOf<"abort">): void {
    this.agent?.addEvent(
      "rein.abort",
      event.reason === undefined ? {} : { "rein.abort.reason": this.cut(event.reason) },
    );
  }

  runEnded(event: EventOf<"agent_end">): void {
    this.endRun(event.status);
  }

  /** Ends whatever is open (the run ended, or the plugin is being disposed). */
  endRun(status: string, reason?: string): void {
    const now = clock();
    this.endChat();
    for (const [id, tool] of this.tools) {
      if (tool.executing !== undefined) tool.span.setAttribute(ATTR.errorType, "not_finished");
      this.endTool(id, now);
    }
    const agent = this.agent;
    if (!agent) return;
    this.agent = undefined;
    agent.setAttribute(REIN.runStatus, status);
    if (status === "error") {
      agent.setAttribute(ATTR.errorType, "run_error");
      agent.fail(reason ? this.cut(reason) : "run_error");
    } else if (status === "aborted") {
      agent.setAttribute(ATTR.errorType, "aborted");
    }
    if (reason !== undefined) agent.setAttribute(REIN.runReason, this.cut(reason));
    if (this.options.metrics) {
      this.options.spans.duration((now - this.runStartedAt) / 1000, {
        [ATTR.operationName]: OPERATION.invokeAgent,
        [ATTR.agentName]: this.options.agentName,
        ...(status === "error" ? { [ATTR.errorType]: "run_error" } : {}),
      });
    }
    agent.end(now);
  }

  private endChat(): void {
    const chat = this.chat;
    if (!chat) return;
    this.chat = undefined;
    chat.span.setAttribute(ATTR.errorType, "not_finished");
    chat.span.end();
  }

  private toolSpan(toolCallId: string, toolName: string, args: unknown, started: number): ToolSpan {
    const open = this.tools.get(toolCallId);
    if (open) return open;
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.executeTool,
      [ATTR.toolName]: toolName,
      [ATTR.toolCallId]: toolCallId,
      [ATTR.toolType]: MCP_TOOL.test(toolName) ? "extension" : "function",
    };
    if (this.options.captureContent)
      attributes[ATTR.toolArguments] = this.cut(JSON.stringify(args) ?? "null");
    const span = this.options.spans.start(
      `${OPERATION.executeTool} ${toolName}`,
      { kind: SpanKind.INTERNAL, time: started, attributes },
      this.agent,
    );
    const tool = { span, started };
    this.tools.set(toolCallId, tool);
    return tool;
  }

  private endTool(toolCallId: string, at: Millis): void {
    const tool = this.tools.get(toolCallId);
    if (!tool) return;
    this.tools.delete(toolCallId);
    tool.span.end(at);
  }

  /** Records a decision (span or event, per `decisions`) from the last checkpoint to `now`. */
  private guardrail(tool: ToolSpan, toolName: string, attributes: Attributes, now: Millis): void {
    const started = Math.min(this.checkpoint || now, now);
    this.checkpoint = now;
    if (this.options.decisions === "event") {
      tool.span.addEvent(OPERATION.applyGuardrail, attributes, now);
      return;
    }
    this.options.spans
      .start(
        `${OPERATION.applyGuardrail} ${toolName}`,
        { kind: SpanKind.INTERNAL, time: started, attributes },
        tool.span,
      )
      .end(now);
  }

  private decisionAttributes(event: EventOf<"tool_decision">): Attributes {
    const attributes: Attributes = {
      [ATTR.operationName]: OPERATION.applyGuardrail,
      [ATTR.toolCallId]: event.toolCallId,
      [REIN.decision]: event.decision,
      [REIN.decisionBy]: event.by,
      [REIN.decisionReason]: this.cut(event.reason),
    };
    const rule = ruleOf(event.by);
    if (rule !== undefined) attributes[REIN.decisionRule] = rule;
    if (event.askedBy !== undefined) attributes[REIN.decisionAskedBy] = event.askedBy;
    if (event.approvalId !== undefined) attributes[REIN.approvalId] = event.approvalId;
    return attributes;
  }

  /** Masked first, then cut: a secret is never half-kept by the cut. */
  private cut(text: string): string {
    const masked = this.options.mask(text);
    const max = this.options.maxContentLength;
    return masked.length <= max
      ? masked
      : `${masked.slice(0, max)}… [${masked.length - max} more characters]`;
  }
}
