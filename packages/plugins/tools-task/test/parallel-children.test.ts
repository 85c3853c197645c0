/**
 * Several `task` calls in one turn: they run at the same time, at most
 * `maxConcurrent` of them, each in its own child session, and their results come
 * back in call order, numbered in call order, however the children finish.
 */
import { defineTool, type EventOf, type ToolResult, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import task, { type TaskDetails } from "../src/index.js";
import { call, routedScript } from "./support/routed-script.js";

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

/** A tool that holds each call until the test releases it, counting how many run at once. */
function holdTool() {
  let running = 0;
  let most = 0;
  const waiting = new Map<string, () => void>();
  const started: string[] = [];
  let notify: (() => void) | undefined;
  const tool = defineTool({
    name: "hold",
    description: "hold",
    risk: "read",
    parameters: Type.Object({ label: Type.String() }),
    execute: (args, context) =>
      new Promise<ToolResult>((resolve) => {
        running++;
        most = Math.max(most, running);
        started.push(args.label);
        notify?.();
        const done = () => {
          running--;
          resolve({ content: [{ type: "text", text: `held ${args.label}` }] });
        };
        waiting.set(args.label, done);
        context.signal.addEventListener("abort", done, { once: true });
      }),
  });
  return {
    tool,
    most: () => most,
    started,
    release: (label: string) => waiting.get(label)?.(),
    /** Resolves once `count` calls have started. */
    untilStarted: (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (started.length >= count) resolve();
        };
        notify = check;
        check();
      }),
  };
}

describe("parallel children", () => {
  it("run concurrently up to maxConcurrent; results in call order, numbered in call order", async () => {
    const hold = holdTool();
    t = await createTestHarness({
      tools: [hold.tool],
      plugins: [[task, { maxConcurrent: 2 }]],
      script: routedScript({
        go: [
          {
            toolCalls: [
              { id: "p1", name: "task", args: { prompt: "A" } },
              { id: "p2", name: "task", args: { prompt: "B" } },
              { id: "p3", name: "task", args: { prompt: "C" } },
            ],
          },
          "all done",
        ],
        A: [call("a1", "hold", { label: "A" }), "answer A"],
        B: [call("b1", "hold", { label: "B" }), "answer B"],
        C: [call("c1", "hold", { label: "C" }), "answer C"],
      }),
    });
    const running = t.prompt("go");
    await hold.untilStarted(2);
    // Two children hold their calls; the third waits for a slot.
    expect(hold.started.sort()).toEqual(["A", "B"]);
    hold.release("B"); // the second finishes first
    await hold.untilStarted(3);
    hold.release("C");
    hold.release("A");
    const outcome = await running;
    expect(outcome.status).toBe("completed");
    expect(hold.most()).toBe(2);

    const results = t.messages().filter((m) => m.role === "toolResult");
    expect(results.map((m) => (m.role === "toolResult" ? m.toolCallId : ""))).toEqual(["p1", "p2", "p3"]);
    const details = results.map((m) =>
      m.role === "toolResult" ? (m.details as unknown as TaskDetails) : undefined,
    );
    const runId = (t.eventsOf("agent_start")[0] as EventOf<"agent_start">).runId;
    expect(details.map((d) => d?.path)).toEqual([1, 2, 3].map((n) => `task#${n} of run ${runId}`));
    expect(results.map((m) => (m.role === "toolResult" ? m.content[0] : undefined))).toEqual(
      ["A", "B", "C"].map((x) => expect.objectContaining({ text: expect.stringContaining(`answer ${x}`) })),
    );
    // Each child its own session, linked to its call.
    const sessions = new Set(details.map((d) => d?.sessionId));
    expect(sessions.size).toBe(3);
    const links = t.eventsOf("child_event").map((e) => [e.agent.toolCallId, e.agent.sessionId]);
    for (const [index, id] of ["p1", "p2", "p3"].entries()) {
      expect(links).toContainEqual([id, details[index]?.sessionId]);
    }
  });

  it("an abort of the parent aborts every running child and the calls they were running", async () => {
    const hold = holdTool();
    t = await createTestHarness({
      tools: [hold.tool],
      plugins: [task],
      script: routedScript({
        go: [
          {
            toolCalls: [
              { id: "p1", name: "task", args: { prompt: "A" } },
              { id: "p2", name: "task", args: { prompt: "B" } },
            ],
          },
          "never asked",
        ],
        A: [call("a1", "hold", { label: "A" }), "never asked"],
        B: [call("b1", "hold", { label: "B" }), "never asked"],
      }),
    });
    const running = t.prompt("go");
    await hold.untilStarted(2);
    t.harness.abort("stop everything");
    const outcome = await running;
    expect(outcome.status).toBe("aborted");
    const ends = t
      .eventsOf("child_event")
      .flatMap((e) => (e.event.type === "agent_end" ? [[e.agent.toolCallId, e.event.status]] : []));
    expect(ends.sort()).toEqual([
      ["p1", "aborted"],
      ["p2", "aborted"],
    ]);
    // No child asked the model again after its call was cut short.
    const childRequests = t.requests.filter((r) =>
      r.context.messages.some(
        (m) => m.role === "toolResult" && m.toolCallId !== "p1" && m.toolCallId !== "p2",
      ),
    );
    expect(childRequests).toEqual([]);
    const results = t.messages().filter((m) => m.role === "toolResult");
    expect(results.map((m) => (m.role === "toolResult" ? [m.toolCallId, m.isError] : []))).toEqual([
      ["p1", true],
      ["p2", true],
    ]);
  });
});
