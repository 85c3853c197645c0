/**
 * The tool stack of a configured agent, offered to an MCP client: `tools/list`
 * and `tools/call` answered by running each call through the agent's harness.
 *
 * Invariants:
 * - A call is a real harness run: a scripted stand-in model emits exactly the
 *   client's tool call, so it passes `toolCall`, `toolGate`, `permissionAsk`,
 *   the tool, `toolResult` (redaction), events (audit, guard budgets) and is
 *   recorded in the session like any run; `rein replay` re-decides it later.
 * - The run stops once the call is answered (`stopAfterTools`, recorded in its
 *   `run_start`): the model is not asked to read the result. A turn a plugin adds
 *   (a queued follow-up, a `beforeStop` continuation) still runs and gets the
 *   stand-in's closing text.
 * - The stand-in model is sent only the last message, so a call costs the same
 *   however many calls the session already holds.
 * - Calls run one at a time, in arrival order (the harness runs one run at a
 *   time; the gates see calls in the order they are answered).
 * - What the client gets is what the session recorded: the redacted result, or
 *   the denial with its reason and who decided, as an error result.
 * - Only active tools are offered; with `hideDenied` a tool whose gate denies a
 *   call outright (no arguments considered: a rule on the whole tool, or the
 *   default verdict for its risk) is left out of `tools/list` and still denied
 *   if called by name.
 */
import type { AgentHarness, AnyAgentTool, RecordedToolResult, ToolGateCall } from "@rein/harness";
import { Stage } from "@rein/harness";
import type { ScriptedModel, ScriptReply, ScriptRequest } from "@rein/sdk";

/** An MCP tool description (the fields of the protocol's `Tool`). */
export interface OfferedTool {
  name: string;
  title?: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean; openWorldHint?: boolean };
}

/** An MCP `CallToolResult`. */
export interface CallResult {
  content: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[];
  isError: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface GatewayOptions {
  hideDenied: boolean;
}

/** MCP annotations that say what Rein's risk says, no more. */
function annotationsFor(risk: AnyAgentTool["risk"]): OfferedTool["annotations"] | undefined {
  switch (risk) {
    case "read":
      return { readOnlyHint: true, destructiveHint: false, openWorldHint: false };
    case "write":
      return { readOnlyHint: false, destructiveHint: true, openWorldHint: false };
    case "network":
      return { readOnlyHint: false, openWorldHint: true };
    case "exec":
      return { readOnlyHint: false, destructiveHint: true, openWorldHint: true };
    default:
      return undefined;
  }
}

const SPARE_REPLIES = 8;

const errorResult = (text: string, meta?: Record<string, unknown>): CallResult => ({
  content: [{ type: "text", text }],
  isError: true,
  ...(meta ? { _meta: meta } : {}),
});

export class ToolGateway {
  private queue: Promise<unknown> = Promise.resolve();
  private current: { id: string; name: string; args: Record<string, unknown>; emitted: boolean } | undefined;
  private counter = 0;

  constructor(
    private readonly harness: AgentHarness,
    private readonly model: ScriptedModel,
    private readonly options: GatewayOptions,
  ) {
    // The stand-in model reads only the last message. Sending it the whole session would
    // cost time (and estimated "tokens", which budgets count) in proportion to every call
    // served so far. Last of all taps, so plugins still see the full request.
    harness.hooks.beforeRequest.tap({ name: "rein-mcp-serve", stage: Stage.last + 1 }, (request) => ({
      ...request,
      messages: request.messages.slice(-1),
    }));
  }

  private activeTools(): AnyAgentTool[] {
    const active = new Set(this.harness.activeToolNames);
    return this.harness.tools.filter((tool) => active.has(tool.name));
  }

  /** Whether the gate denies every call of `tool` (decided with no arguments, no permission asked). */
  private async deniedOutright(tool: AnyAgentTool): Promise<boolean> {
    const call: ToolGateCall = { id: "mcp-list", name: tool.name, args: {}, risk: tool.risk, facts: {} };
    const signal = new AbortController().signal;
    const context = this.harness.toolHookContext(signal, { ...call, tool });
    // The gate hook reduces its taps itself (strictest wins); no opinion falls to the default.
    const verdict = await this.harness.hooks.toolGate.promise(call, context);
    if (verdict) return verdict.decision === "deny";
    const fallback = this.harness.defaultToolVerdict;
    return (typeof fallback === "function" ? fallback(call).decision : fallback) === "deny";
  }

  async list(): Promise<OfferedTool[]> {
    const offered: OfferedTool[] = [];
    for (const tool of this.activeTools()) {
      if (this.options.hideDenied && (await this.deniedOutright(tool))) continue;
      const entry: OfferedTool = {
        name: tool.name,
        description: tool.description,
        inputSchema: JSON.parse(JSON.stringify(tool.parameters)) as OfferedTool["inputSchema"],
      };
      if (tool.label) entry.title = tool.label;
      const annotations = annotationsFor(tool.risk);
      if (annotations) entry.annotations = annotations;
      offered.push(entry);
    }
    return offered;
  }

  /** The stand-in model's reply: the pending call first, then a closing text (turns plugins add). */
  private reply = (request: ScriptRequest): ScriptReply => {
    const last = request.context.messages.at(-1);
    const call = this.current;
    // Once per call: a message a plugin queues after the result must not replay the call.
    if (call && !call.emitted && last?.role === "user") {
      call.emitted = true;
      return { toolCalls: [{ id: call.id, name: call.name, args: call.args }] };
    }
    return call ? `(tools/call ${call.name} answered)` : "(no call pending)";
  };

  /** Runs one client call through the harness; resolves with what the session recorded. */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallResult> {
    const run = this.queue.then(() => this.run(name, args, signal));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async run(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallResult> {
    if (signal.aborted) return errorResult("cancelled by the client before it ran");
    const tool = this.activeTools().find((candidate) => candidate.name === name);
    if (!tool) return errorResult(`unknown tool "${name}" (not among this Rein agent's active tools)`);
    // A tool hidden by hideDenied and called by name still runs through the gates: the denial is recorded.
    this.counter += 1;
    this.current = { id: `mcp_${Date.now().toString(36)}_${this.counter}`, name, args, emitted: false };
    // Dynamic replies: the tool call, then closing answers, with room for turns plugins
    // add (a queued follow-up). Replies a run did not use stay queued for the next call.
    while (this.model.pending() < SPARE_REPLIES) this.model.append([this.reply]);
    const onAbort = () => this.harness.abort("cancelled by the MCP client");
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      // The run ends once the call is answered: the stand-in's closing turn would cost a
      // model turn per call for nothing (recorded in run_start, so `rein replay` does the same).
      const outcome = await this.harness.prompt(`MCP client: tools/call ${name}`, { stopAfterTools: true });
      const id = this.current.id;
      const recorded = outcome.messages.find(
        (message): message is RecordedToolResult =>
          message.role === "toolResult" && message.toolCallId === id,
      );
      if (!recorded) {
        const why = outcome.reason ?? `the run ended ${outcome.status} without running the call`;
        return errorResult(`rein: ${why}`, { "rein/status": outcome.status });
      }
      const content: CallResult["content"] = recorded.content.map((block) =>
        block.type === "image"
          ? { type: "image", data: block.data, mimeType: block.mimeType }
          : { type: "text", text: block.text },
      );
      const result: CallResult = { content, isError: recorded.isError === true };
      if (recorded.decision) result._meta = { "rein/decision": recorded.decision };
      return result;
    } finally {
      signal.removeEventListener("abort", onAbort);
      this.current = undefined;
      // Nothing reads them here, and a server would keep every request it ever got.
      this.model.forgetRequests();
    }
  }
}
