/**
 * Child agents (the `task` tool) in the trace: each child's `invoke_agent` hangs
 * under the parent's `execute_tool task` span of the call that started it, with
 * its own chat and tool spans, its decisions carrying the agent path.
 */
import { defineTool, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import task from "@rein/tools-task";
import { afterEach, describe, expect, it } from "vitest";
import { call, routedScript } from "../../tools-task/test/support/routed-script.js";
import otel from "../src/index.js";
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "./support/otlp-receiver.js";

const note = defineTool({
  name: "note",
  description: "note",
  risk: "read",
  parameters: Type.Object({ text: Type.String() }),
  execute: (args) => ({ content: [{ type: "text", text: `noted ${args.text}` }] }),
});

let t: TestHarness | undefined;
let receiver: OtlpReceiver | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  await receiver?.close();
});

describe("subagents in the trace", () => {
  it("two children, each under its task call's span, with their own tool spans", async () => {
    receiver = await startOtlpReceiver();
    t = await createTestHarness({
      tools: [note],
      plugins: [task, [otel, { endpoint: receiver.url, batchDelayMs: 10 }]],
      script: routedScript({
        go: [
          {
            toolCalls: [
              { id: "p1", name: "task", args: { prompt: "A" } },
              { id: "p2", name: "task", args: { prompt: "B" } },
            ],
          },
          "both done",
        ],
        A: [call("a1", "note", { text: "A" }), "answer A"],
        B: [call("b1", "note", { text: "B" }), "answer B"],
      }),
    });
    const outcome = await t.prompt("go");
    expect(outcome.status).toBe("completed");
    await t.dispose();
    const spans = receiver.spans;
    const named = (name: string) => spans.filter((span) => span.name === name);
    const [root, ...children] = named("invoke_agent rein").concat(named("invoke_agent task"));
    expect(root?.parentSpanId).toBeUndefined();
    expect(children).toHaveLength(2);
    const taskSpans = named("execute_tool task");
    expect(taskSpans.map((span) => span.attributes["gen_ai.tool.call.id"]).sort()).toEqual(["p1", "p2"]);
    for (const child of children as ReceivedSpan[]) {
      expect(child.traceId).toBe(root?.traceId);
      const under = taskSpans.find((span) => span.spanId === child.parentSpanId);
      expect(under, "a child hangs under a task span").toBeDefined();
      expect(child.attributes["rein.agent.path"]).toMatch(/^task#\d of run /);
      expect(child.attributes["gen_ai.conversation.id"]).not.toBe(t.session.id);
      const own = spans.filter((span) => span.parentSpanId === child.spanId).map((span) => span.name);
      expect(own.filter((name) => name.startsWith("chat ")).length).toBeGreaterThanOrEqual(2);
      expect(own).toContain("execute_tool note");
      const noteSpan = spans.find(
        (span) => span.parentSpanId === child.spanId && span.name === "execute_tool note",
      );
      const gate = spans.find((span) => span.parentSpanId === noteSpan?.spanId);
      expect(String(gate?.attributes["rein.decision.by"])).toContain(" in task#");
    }
  });
});
