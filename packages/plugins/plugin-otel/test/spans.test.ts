/**
 * The span tree of a run, exported over real OTLP/HTTP to a receiver on
 * 127.0.0.1: names, parents, GenAI attributes, decisions as apply_guardrail
 * spans, content only when opted in (and masked first), trace context in and out.
 */
import { join } from "node:path";
import { definePlugin, defineTool, Type, textMasks, traceContext } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import mcp from "@rein/tools-mcp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import otel from "../src/index.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./support/otlp-receiver.js";

const seenTraceparents: string[] = [];
const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({ command: Type.String() }),
  execute: (args) => ({ content: [{ type: "text", text: `ran ${args.command} with s3cr3t-token` }] }),
});

/** Denies rm (rule no-rm), no opinion otherwise; masks a secret everywhere. */
const house = definePlugin({
  name: "house",
  setup(rein) {
    rein.hooks.toolGate.tap("house", (call) =>
      String(call.args.command).startsWith("rm")
        ? { decision: "deny", rule: "no-rm", reason: "never delete (s3cr3t-token)" }
        : undefined,
    );
    rein.onDispose(textMasks(rein).add("house", (text) => text.replaceAll("s3cr3t-token", "[masked]")));
  },
});

/** A tool reading the trace context a tool that calls out would send. */
const probe = definePlugin({
  name: "probe",
  setup(rein) {
    rein.registerTool(
      defineTool({
        name: "probe",
        description: "records its traceparent",
        parameters: Type.Object({}),
        execute: (_args, context) => {
          seenTraceparents.push(traceContext(rein).traceparentFor(context.toolCallId) ?? "none");
          return { content: [{ type: "text", text: "ok" }] };
        },
      }),
    );
  },
});

let receiver: OtlpReceiver;
let t: TestHarness | undefined;
beforeEach(async () => {
  receiver = await startOtlpReceiver();
  seenTraceparents.length = 0;
});
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  await receiver.close();
  delete process.env.TRACEPARENT;
});

const otelAt = (url: string, extra: Record<string, unknown> = {}) =>
  [otel, { endpoint: url, batchDelayMs: 10, ...extra }] as const;

const byName = (spans: ReceivedSpan[], prefix: string) =>
  spans.filter((span) => span.name.startsWith(prefix));
const only = (spans: ReceivedSpan[], prefix: string): ReceivedSpan => {
  const found = byName(spans, prefix);
  expect(found, `one span named ${prefix}*`).toHaveLength(1);
  return found[0] as ReceivedSpan;
};
const call = (name: string, args: Record<string, unknown> = {}) => ({ toolCalls: [{ name, args }] });

describe("the span tree of a run", () => {
  it("invoke_agent > chat and execute_tool > apply_guardrail, with an allowed and a denied call", async () => {
    t = await createTestHarness({
      plugins: [house, otelAt(receiver.url)],
      tools: [bash],
      script: [call("bash", { command: "ls" }), call("bash", { command: "rm -rf /" }), "done"],
    });
    const outcome = await t.prompt("go");
    expect(outcome.status).toBe("completed");
    await t.dispose();
    expect(receiver.problems).toEqual([]);
    const spans = receiver.spans;

    const agent = only(spans, "invoke_agent");
    expect(agent.name).toBe("invoke_agent rein");
    expect(agent.parentSpanId).toBeUndefined();
    expect(agent.kind).toBe(1);
    expect(agent.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "rein",
      "gen_ai.conversation.id": t.session.id,
      "rein.run.id": outcome.runId,
      "rein.run.status": "completed",
    });
    expect(agent.resource["service.name"]).toBe("rein");
    expect(agent.scope).toBe("@rein/plugin-otel");
    for (const span of spans) expect(span.traceId).toBe(agent.traceId);

    const chats = byName(spans, "chat ");
    expect(chats).toHaveLength(3);
    const model = t.harness.configView.model;
    for (const chat of chats) {
      expect(chat.name).toBe(`chat ${model.id}`);
      expect(chat.parentSpanId).toBe(agent.spanId);
      expect(chat.kind).toBe(3);
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": model.provider,
        "gen_ai.request.model": model.id,
      });
      expect(chat.attributes["gen_ai.usage.input_tokens"]).toEqual(expect.any(Number));
      expect(chat.attributes["gen_ai.usage.output_tokens"]).toEqual(expect.any(Number));
      expect(chat.endNs).toBeGreaterThanOrEqual(chat.startNs);
    }
    expect(chats.map((chat) => chat.attributes["gen_ai.response.finish_reasons"])).toEqual([
      ["tool_calls"],
      ["tool_calls"],
      ["stop"],
    ]);

    const tools = byName(spans, "execute_tool ");
    expect(tools.map((span) => span.name)).toEqual(["execute_tool bash", "execute_tool bash"]);
    const [allowed, denied] = tools as [ReceivedSpan, ReceivedSpan];
    const decisions = t.decisions();
    for (const [i, tool] of tools.entries()) {
      expect(tool.parentSpanId).toBe(agent.spanId);
      expect(tool.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "bash",
        "gen_ai.tool.call.id": decisions[i]?.toolCallId,
        "gen_ai.tool.type": "function",
      });
      // Content is opt-in.
      expect(tool.attributes["gen_ai.tool.call.arguments"]).toBeUndefined();
      expect(tool.attributes["gen_ai.tool.call.result"]).toBeUndefined();
    }
    expect(allowed.status.code).toBe(0);
    expect(allowed.attributes["rein.decision"]).toBe("allow");
    expect(denied.status.code).toBe(2);
    expect(denied.attributes).toMatchObject({ "rein.decision": "deny", "error.type": "tool_denied" });
    expect(denied.status.message).toBe("denied by house:no-rm: never delete ([masked])");

    const guardrails = byName(spans, "apply_guardrail ");
    expect(guardrails).toHaveLength(2);
    const [allowedGate, deniedGate] = guardrails as [ReceivedSpan, ReceivedSpan];
    expect(allowedGate.parentSpanId).toBe(allowed.spanId);
    expect(allowedGate.attributes).toMatchObject({
      "gen_ai.operation.name": "apply_guardrail",
      "rein.decision": "allow",
      "rein.decision.by": "harness:default",
      "rein.decision.rule": "default",
    });
    expect(deniedGate.parentSpanId).toBe(denied.spanId);
    expect(deniedGate.attributes).toMatchObject({
      "rein.decision": "deny",
      "rein.decision.by": "house:no-rm",
      "rein.decision.rule": "no-rm",
      "rein.decision.reason": "never delete ([masked])",
    });
    for (const span of spans) expect(JSON.stringify(span.attributes)).not.toContain("s3cr3t");
  });

  it("decisions: event records each decision as an apply_guardrail event on the tool's span", async () => {
    t = await createTestHarness({
      plugins: [house, otelAt(receiver.url, { decisions: "event" })],
      tools: [bash],
      script: [call("bash", { command: "rm x" }), "done"],
    });
    await t.prompt("go");
    await t.dispose();
    expect(byName(receiver.spans, "apply_guardrail")).toEqual([]);
    const tool = only(receiver.spans, "execute_tool bash");
    expect(tool.events).toEqual([
      {
        name: "apply_guardrail",
        attributes: expect.objectContaining({
          "rein.decision": "deny",
          "rein.decision.by": "house:no-rm",
          "rein.decision.reason": "never delete ([masked])",
        }),
      },
    ]);
  });

  it("records arguments and results only when captureContent is on, masked before they are cut", async () => {
    t = await createTestHarness({
      plugins: [house, otelAt(receiver.url, { captureContent: true, maxContentLength: 20 })],
      tools: [bash],
      script: [call("bash", { command: "echo s3cr3t-token" }), "done"],
    });
    await t.prompt("go");
    await t.dispose();
    const tool = only(receiver.spans, "execute_tool");
    const args = '{"command":"echo [masked]"}';
    expect(tool.attributes["gen_ai.tool.call.arguments"]).toBe(
      `${args.slice(0, 20)}… [${args.length - 20} more characters]`,
    );
    const result = "ran echo [masked] with [masked]";
    expect(tool.attributes["gen_ai.tool.call.result"]).toBe(
      `${result.slice(0, 20)}… [${result.length - 20} more characters]`,
    );
  });

  it("publishes each tool call's span as trace context, and continues a trace a host set", async () => {
    const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    t = await createTestHarness({
      plugins: [probe, otelAt(receiver.url)],
      script: [call("probe"), "done"],
    });
    expect(traceContext(t.harness).setParent(parent)).toBe(true);
    await t.prompt("go");
    await t.dispose();
    const agent = only(receiver.spans, "invoke_agent");
    expect(agent.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(agent.parentSpanId).toBe("b7ad6b7169203331");
    const tool = only(receiver.spans, "execute_tool probe");
    expect(seenTraceparents).toEqual([`00-${tool.traceId}-${tool.spanId}-01`]);
  });

  it("continues the trace named by TRACEPARENT when no host set one; a malformed value is ignored", async () => {
    process.env.TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    t = await createTestHarness({ plugins: [otelAt(receiver.url)], script: ["hi"] });
    expect(traceContext(t.harness).setParent("00-zz-not-a-trace")).toBe(false);
    await t.prompt("go");
    await t.dispose();
    const agent = only(receiver.spans, "invoke_agent");
    expect(agent.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
    expect(agent.parentSpanId).toBe("00f067aa0ba902b7");
  });

  it("sends the tool span's traceparent to an MCP server in params._meta", async () => {
    const server = {
      command: process.execPath,
      args: [join(import.meta.dirname, "../../tools-mcp/test/fixtures/changing-server.mjs")],
    };
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fx: server } }], otelAt(receiver.url)],
      script: [call("mcp__fx__meta"), "done"],
    });
    await t.prompt("go");
    await t.dispose();
    const result = t.messages().find((message) => message.role === "toolResult");
    const text = result?.role === "toolResult" ? (result.content[0] as { text: string }).text : "";
    const tool = only(receiver.spans, "execute_tool mcp__fx__meta");
    expect(tool.attributes["gen_ai.tool.type"]).toBe("extension");
    expect(JSON.parse(text).traceparent).toBe(`00-${tool.traceId}-${tool.spanId}-01`);
  });

  it("without a tracer, nothing is added to an MCP call", async () => {
    const server = {
      command: process.execPath,
      args: [join(import.meta.dirname, "../../tools-mcp/test/fixtures/changing-server.mjs")],
    };
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fx: server } }]],
      script: [call("mcp__fx__meta"), "done"],
    });
    await t.prompt("go");
    const result = t.messages().find((message) => message.role === "toolResult");
    const text = result?.role === "toolResult" ? (result.content[0] as { text: string }).text : "";
    expect(text).toMatch(/^\{/);
    expect(JSON.parse(text)).not.toHaveProperty("traceparent");
  });

  it("exports the GenAI token-usage and duration histograms", async () => {
    t = await createTestHarness({
      plugins: [otelAt(receiver.url)],
      tools: [bash],
      script: [call("bash", { command: "ls" }), "done"],
    });
    await t.prompt("go");
    await t.dispose();
    expect(receiver.metrics).toEqual(
      expect.arrayContaining([
        { name: "gen_ai.client.token.usage", unit: "{token}", kind: "histogram" },
        { name: "gen_ai.client.operation.duration", unit: "s", kind: "histogram" },
      ]),
    );
  });

  it("only listens: it taps no decision hook", async () => {
    t = await createTestHarness({ plugins: [otelAt(receiver.url)] });
    const hooks = Object.values(t.harness.hooks) as unknown as { taps: { name: string }[] }[];
    expect(hooks.length).toBeGreaterThanOrEqual(10);
    for (const hook of hooks) expect(hook.taps.map((tap) => tap.name)).not.toContain("otel");
  });
});
