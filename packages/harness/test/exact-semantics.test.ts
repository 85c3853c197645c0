/**
 * The exact semantics an independent acceptance suite found loose (issue 15),
 * one test per rule, named for it.
 */
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../src/events/event-types.js";
import type { ToolHookContext } from "../src/hooks/hook-types.js";
import { echoTool, fixture, sleep } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const decisions = (f: ReturnType<typeof fixture>) =>
  f.events.flatMap((e) =>
    e.type === "tool_decision" ? [{ toolCallId: e.toolCallId, decision: e.decision, by: e.by }] : [],
  );
const started = (f: ReturnType<typeof fixture>) =>
  f.events.flatMap((e) => (e.type === "tool_execution_start" ? [e.toolCallId] : []));
const toolResults = (f: ReturnType<typeof fixture>) =>
  f.messages().flatMap((m) => (m.role === "toolResult" ? [m] : []));

describe("abort is exact", () => {
  it("abort while a permissionAsk tap waits ends the run promptly: the run's signal cancels the waiting tap", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tap("asker", () => ({ decision: "ask", reason: "confirm" }));
    let asked = false;
    // A person who never answers (the tap ignores the signal on purpose).
    f.harness.hooks.permissionAsk.tapPromise("person", () => {
      asked = true;
      return new Promise(() => undefined);
    });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("never reached")]);
    const run = f.harness.prompt("go");
    while (!asked) await sleep(1);
    const abortedAt = Date.now();
    f.harness.abort("user pressed Esc");
    const outcome = await run;
    expect(Date.now() - abortedAt).toBeLessThan(500);
    expect(outcome.status).toBe("aborted");
    expect(f.harness.phase).toBe("idle");
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)).toEqual([{ toolCallId: expect.any(String), decision: "deny", by: "harness" }]);
    expect(toolResults(f)).toHaveLength(1);
    expect(started(f)).toEqual([]);
    // The abandoned tap is still named at shutdown.
    expect((await f.harness.close(5)).map((c) => `${c.plugin}/${c.hook}`)).toEqual(["person/permissionAsk"]);
  });

  it("no tool of a batch starts after abort from a gate tap", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tap("stopper", () => {
      f.harness.abort("enough");
      return { decision: "allow", reason: "fine, but the run is over" };
    });
    f.scripted.script([
      callTools(["echo", { text: "a" }, "c1"], ["echo", { text: "b" }, "c2"]),
      reply("never reached"),
    ]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("aborted");
    expect(echo.calls).toHaveLength(0);
    expect(started(f)).toEqual([]);
    // Every call still has exactly one result, saying it did not start.
    expect(toolResults(f).map((m) => [m.toolCallId, m.isError])).toEqual([
      ["c1", true],
      ["c2", true],
    ]);
    expect(toolResults(f)[0]?.content[0]).toMatchObject({ text: expect.stringContaining("aborted") });
  });

  it("no tool of a batch starts after abort between two sequential calls", async () => {
    const f = fixture();
    const ran: string[] = [];
    const seq = echoTool({
      executionMode: "sequential",
      execute: async (args: { text: string }) => {
        ran.push(args.text);
        if (args.text === "first") f.harness.abort("stop after the first");
        return { content: [{ type: "text", text: args.text }] };
      },
    });
    f.harness.setTools([seq.tool]);
    f.scripted.script([
      callTools(["echo", { text: "first" }, "c1"], ["echo", { text: "second" }, "c2"]),
      reply("never reached"),
    ]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("aborted");
    expect(ran).toEqual(["first"]);
    expect(started(f)).toEqual(["c1"]);
    expect(toolResults(f).map((m) => m.toolCallId)).toEqual(["c1", "c2"]);
    expect(toolResults(f)[1]?.isError).toBe(true);
  });
});

describe("timeouts are per tap", () => {
  it("a tap's own timeout is honoured even after an earlier async tap", async () => {
    const echo = echoTool();
    // The harness default is long; only the second tap's own 150 ms may apply.
    const f = fixture({ tools: [echo.tool], failurePolicy: { tapTimeoutMs: 10_000 } });
    f.harness.hooks.toolGate.tapPromise("slow-but-fine", async () => {
      await sleep(50);
      return undefined;
    });
    f.harness.hooks.toolGate.tapPromise({ name: "hung", timeout: 150 }, () => new Promise(() => undefined));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const startedAt = Date.now();
    await f.harness.prompt("go");
    const elapsed = Date.now() - startedAt;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(1_500);
    expect(decisions(f)).toEqual([{ toolCallId: expect.any(String), decision: "deny", by: "hung" }]);
    expect(echo.calls).toHaveLength(0);
  });

  it("a shorter deadline of a later tap fires before a longer one armed earlier", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], failurePolicy: { tapTimeoutMs: 10_000 } });
    // An event listener with no deadline keeps a call in flight the whole time.
    f.harness.hooks.toolCall.tapPromise({ name: "long", timeout: 5_000 }, async () => undefined);
    f.harness.hooks.toolGate.tapPromise({ name: "short", timeout: 40 }, () => new Promise(() => undefined));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const startedAt = Date.now();
    await f.harness.prompt("go");
    expect(Date.now() - startedAt).toBeLessThan(1_000);
    expect(decisions(f)[0]).toMatchObject({ decision: "deny", by: "short" });
  });
});

describe("arguments are decided on frozen values", () => {
  it("arguments changed in place by a toolCall tap are impossible: the tap fails, the tool never runs", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolCall.tap("mutator", (call) => {
      (call.args as { text: unknown }).text = 42; // forbidden by the schema
      return call;
    });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await expect(f.harness.prompt("go")).rejects.toMatchObject({
      code: "hook",
      plugin: "mutator",
      hook: "toolCall",
    });
    expect(echo.calls).toHaveLength(0);
  });

  it("a gate tap cannot change the arguments it judges: the attempt fails closed", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tap("sneaky", (call) => {
      (call.args as { text: string }).text = "rm -rf /";
      return { decision: "allow", reason: "rewrote it" };
    });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)[0]).toMatchObject({ decision: "deny", by: "sneaky" });
  });

  it("a rewrite returned by a toolCall tap is validated again and the tool gets a mutable copy", async () => {
    const f = fixture();
    const seen: { text: string }[] = [];
    const echo = echoTool({
      execute: async (args: { text: string }) => {
        args.text = `${args.text}!`; // a tool may use its own copy as it likes
        seen.push(args);
        return { content: [{ type: "text", text: args.text }] };
      },
    });
    f.harness.setTools([echo.tool]);
    f.harness.hooks.toolCall.tap("rewriter", (call) => ({ ...call, args: { text: "rewritten" } }));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(seen).toEqual([{ text: "rewritten!" }]);
    const start = f.events.find((e) => e.type === "tool_execution_start");
    expect(start).toMatchObject({ args: { text: "rewritten" } });
  });
});

describe("every decision is an event", () => {
  it("tool_decision events for the harness's own refusals (unknown tool, invalid arguments)", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([
      callTools(["nope", {}, "c1"], ["echo", { text: 7 }, "c2"], ["echo", { wrong: true }, "c3"]),
      reply("done"),
    ]);
    await f.harness.prompt("go");
    const refusals = f.events.flatMap((e) =>
      e.type === "tool_decision" && e.decision === "deny"
        ? [{ id: e.toolCallId, by: e.by, reason: e.reason }]
        : [],
    );
    expect(refusals).toEqual([
      { id: "c1", by: "harness", reason: "unknown tool" },
      { id: "c3", by: "harness", reason: "invalid arguments" },
    ]);
    // `text: 7` is coerced to "7" by the schema and allowed by the default verdict.
    expect(echo.calls.map((c) => c.args.text)).toEqual(["7"]);
  });

  it("a denied call gets tool_decision and its result, never tool_execution_start", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tap("denier", () => ({ decision: "deny", reason: "no" }));
    f.scripted.script([callTools(["echo", { text: "x" }, "c1"]), reply("done")]);
    await f.harness.prompt("go");
    const about = (e: HarnessEvent) =>
      ("toolCallId" in e && e.toolCallId === "c1") ||
      (e.type === "message_end" && e.message.role === "toolResult" && e.message.toolCallId === "c1");
    const types = f.events.filter(about).map((e) => e.type);
    expect(types).toEqual(["tool_decision", "message_end"]);
  });
});

describe("direct hook calls, navigation and settle", () => {
  it("toolGate.promise() called directly keeps allow and ask verdicts", async () => {
    const f = fixture();
    const gate = f.harness.hooks.toolGate;
    const context = f.harness.hookContext() as ToolHookContext;
    const call = { id: "c1", name: "echo", args: {}, risk: undefined, facts: {} };
    expect(await gate.promise(call, context)).toBeUndefined();
    gate.tap("allower", () => ({ decision: "allow", reason: "fine" }));
    expect(await gate.promise(call, context)).toMatchObject({ decision: "allow", by: "allower" });
    gate.tapPromise("asker", async () => ({ decision: "ask", reason: "confirm", rule: "r1" }));
    gate.tap("allower-2", () => ({ decision: "allow", reason: "fine" }));
    expect(await gate.promise(call, context)).toMatchObject({ decision: "ask", by: "asker:r1" });
    const viaCallback = await new Promise((resolve, reject) =>
      gate.callAsync(call, context, (error, result) => (error ? reject(error) : resolve(result))),
    );
    expect(viaCallback).toMatchObject({ decision: "ask", by: "asker:r1" });
  });

  it("an invalid navigateTree target is rejected before the phase is taken (no settled)", async () => {
    const f = fixture();
    const phases: string[] = [];
    f.harness.subscribe(() => {
      phases.push(f.harness.phase);
    });
    await expect(f.harness.navigateTree("no-such-entry")).rejects.toMatchObject({ code: "invalid_argument" });
    expect(f.types()).not.toContain("settled");
    expect(f.types()).not.toContain("branch_start");
    expect(f.harness.phase).toBe("idle");
  });

  it("a settled listener that awaits prompt() does not hang", async () => {
    const f = fixture();
    f.scripted.script([reply("one"), reply("two")]);
    let second: string | undefined;
    const off = f.harness.on("settled", async () => {
      off();
      const outcome = await f.harness.prompt("again");
      second = outcome.status;
    });
    const first = await Promise.race([f.harness.prompt("go"), sleep(2_000).then(() => "hung" as const)]);
    expect(first).not.toBe("hung");
    await f.harness.waitForIdle();
    expect(second).toBe("completed");
    expect(f.types().filter((t) => t === "settled")).toHaveLength(2);
  });
});
