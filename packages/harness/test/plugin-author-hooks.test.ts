/**
 * The three gaps plugin authors reported (issue 15): `context.stopRun(reason)`,
 * a `beforeRetry` decision hook, and tool progress updates through `toolUpdate`.
 */
import { describe, expect, it } from "vitest";
import { providerError } from "./support/compaction.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

describe("context.stopRun(reason)", () => {
  it("a gate tap's stopRun ends the run at once: no further call or request, status aborted with the reason", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tap("budget", (_call, context) => {
      context.stopRun("budget: 0 tool calls left");
      return { decision: "deny", reason: "budget exhausted" };
    });
    f.scripted.script([
      callTools(["echo", { text: "a" }, "c1"], ["echo", { text: "b" }, "c2"]),
      reply("never requested"),
    ]);
    f.harness.followUp("queued by the user");
    const outcome = await f.harness.prompt("go");
    expect(outcome).toMatchObject({ status: "aborted", reason: "budget: 0 tool calls left" });
    expect(echo.calls).toHaveLength(0);
    expect(f.scripted.requests).toHaveLength(1);
    expect(f.events.find((e) => e.type === "abort")).toMatchObject({ reason: "budget: 0 tool calls left" });
    // Not a user's cancel: what the user queued stays queued.
    expect(f.harness.queued("followUp")).toBe(1);
  });

  it("a beforeRequest tap's stopRun cancels the request before the provider answers", async () => {
    const f = fixture();
    f.harness.hooks.beforeRequest.tap("budget", (payload, context) => {
      context.stopRun("token budget exhausted");
      return payload;
    });
    f.scripted.script([reply("never")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome).toMatchObject({ status: "aborted", reason: "token budget exhausted" });
    const last = f.messages().at(-1);
    expect(last).toMatchObject({ role: "assistant", stopReason: "aborted" });
  });

  it("stopRun outside a run does nothing, and needs a reason", () => {
    const f = fixture();
    const context = f.harness.hookContext();
    expect(() => context.stopRun("idle")).not.toThrow();
    expect(f.harness.phase).toBe("idle");
    expect(() => context.stopRun("" as string)).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });
});

describe("beforeRetry (bail: first answer wins)", () => {
  it("is asked before each retry with the attempt, delay and error; no answer retries as planned", async () => {
    const f = fixture({ retry: { baseDelayMs: 0, maxAttempts: 3 } });
    const asked: { attempt: number; delayMs: number; errorMessage: string }[] = [];
    f.harness.hooks.beforeRetry.tap("observer", (request) => {
      asked.push({ attempt: request.attempt, delayMs: request.delayMs, errorMessage: request.errorMessage });
      return undefined;
    });
    f.scripted.script([providerError("429 rate limit"), reply("ok")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(asked).toEqual([{ attempt: 2, delayMs: 0, errorMessage: "429 rate limit" }]);
  });

  it("stop gives up at once: the turn ends with the provider error and no retry event", async () => {
    const f = fixture({ retry: { baseDelayMs: 0, maxAttempts: 5 } });
    f.harness.hooks.beforeRetry.tap("budget", () => ({ decision: "stop", reason: "no money for retries" }));
    f.harness.hooks.beforeRetry.tap("never", () => ({ decision: "retry" }));
    f.scripted.script([providerError("503 Service Unavailable"), reply("not reached")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("error");
    expect(f.scripted.requests).toHaveLength(1);
    expect(f.types()).not.toContain("retry");
  });

  it("retry may choose the delay, which the retry event reports", async () => {
    const f = fixture({ retry: { baseDelayMs: 3_600_000, maxDelayMs: 3_600_000, maxAttempts: 2 } });
    f.harness.hooks.beforeRetry.tap("impatient", () => ({ decision: "retry", delayMs: 1 }));
    f.scripted.script([providerError("overloaded"), reply("ok")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(f.events.find((e) => e.type === "retry")).toMatchObject({ delayMs: 1 });
  });

  it("a malformed answer fails the run naming plugin and hook", async () => {
    const f = fixture({ retry: { baseDelayMs: 0 } });
    f.harness.hooks.beforeRetry.tap("sloppy", () => ({ decision: "maybe" }) as never);
    f.scripted.script([providerError("overloaded"), reply("ok")]);
    await expect(f.harness.prompt("go")).rejects.toMatchObject({
      code: "hook",
      plugin: "sloppy",
      hook: "beforeRetry",
    });
  });
});

describe("toolUpdate (waterfall over each progress update)", () => {
  const streaming = () =>
    echoTool({
      execute: async (args: { text: string }, context) => {
        context.update({ content: [{ type: "text", text: `working on ${args.text}` }] });
        context.update({ content: [{ type: "text", text: `almost ${args.text}` }] });
        return { content: [{ type: "text", text: `done ${args.text}` }] };
      },
    });

  it("every partial passes the taps before tool_execution_update, in order, before the call's end", async () => {
    const tool = streaming();
    const f = fixture({ tools: [tool.tool] });
    const redact = (text: string) => text.replaceAll("secret", "[redacted]");
    f.harness.hooks.toolUpdate.tapPromise("redact", async (partial) => ({
      ...partial,
      content: partial.content.map((b) => (b.type === "text" ? { ...b, text: redact(b.text) } : b)),
    }));
    f.harness.hooks.toolUpdate.tap("mark", (partial, context) => ({
      ...partial,
      details: { call: context.call.id },
    }));
    f.scripted.script([callTools(["echo", { text: "secret" }, "c1"]), reply("done")]);
    await f.harness.prompt("go");
    const updates = f.events.flatMap((e) => (e.type === "tool_execution_update" ? [e.partial] : []));
    expect(updates).toEqual([
      { content: [{ type: "text", text: "working on [redacted]" }], details: { call: "c1" }, isError: false },
      { content: [{ type: "text", text: "almost [redacted]" }], details: { call: "c1" }, isError: false },
    ]);
    const order = f.types().filter((t) => t.startsWith("tool_execution"));
    expect(order).toEqual([
      "tool_execution_start",
      "tool_execution_update",
      "tool_execution_update",
      "tool_execution_end",
    ]);
  });

  it("a failing toolUpdate tap withholds the update (never emitted unredacted) and fails the run", async () => {
    const tool = streaming();
    const f = fixture({ tools: [tool.tool] });
    f.harness.hooks.toolUpdate.tap("broken", () => {
      throw new Error("redactor crashed");
    });
    f.scripted.script([callTools(["echo", { text: "secret" }, "c1"]), reply("done")]);
    await expect(f.harness.prompt("go")).rejects.toMatchObject({
      code: "hook",
      plugin: "broken",
      hook: "toolUpdate",
    });
    expect(f.types()).not.toContain("tool_execution_update");
  });
});
