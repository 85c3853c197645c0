import { describe, expect, it } from "vitest";
import { runBail } from "../src/hooks/create-hooks.js";
import { Stage } from "../src/hooks/hook-table.js";
import type { ToolHookContext } from "../src/hooks/hook-types.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const decisions = (f: ReturnType<typeof fixture>) =>
  f.events.flatMap((e) =>
    e.type === "tool_decision" ? [{ decision: e.decision, by: e.by, reason: e.reason }] : [],
  );

describe("beforeRun (waterfall; a block stops the chain)", () => {
  it("three taps rewrite the system prompt in stage order", async () => {
    const f = fixture({ systemPrompt: "base" });
    f.harness.hooks.beforeRun.tapPromise({ name: "third", stage: Stage.late }, async (p) => ({
      ...p,
      systemPrompt: `${p.systemPrompt}+C`,
    }));
    f.harness.hooks.beforeRun.tapPromise("first", async (p) => ({
      ...p,
      systemPrompt: `${p.systemPrompt}+A`,
    }));
    f.harness.hooks.beforeRun.tap("second", (p) => ({ ...p, systemPrompt: `${p.systemPrompt}+B` }));
    f.scripted.script([reply("ok"), reply("ok")]);
    await f.harness.prompt("go");
    expect(f.scripted.requests[0]?.context.systemPrompt).toBe("base+A+B+C");
  });

  it("a block stops the chain, persists nothing and keeps next-turn messages", async () => {
    const f = fixture();
    const calls: string[] = [];
    f.harness.hooks.beforeRun.tapPromise("a", async (p) => {
      calls.push("a");
      return { ...p, messages: [...p.messages, { role: "user", content: "injected", timestamp: 1 }] };
    });
    f.harness.hooks.beforeRun.tapPromise("blocker", async (p) => {
      calls.push("blocker");
      return { ...p, block: { reason: "outside office hours" } };
    });
    f.harness.hooks.beforeRun.tapPromise("c", async (p) => {
      calls.push("c");
      return { ...p, block: undefined };
    });
    f.harness.nextTurn("keep me");
    const outcome = await f.harness.prompt("go");
    expect(outcome).toMatchObject({ status: "blocked", reason: "outside office hours" });
    expect(calls).toEqual(["a", "blocker"]);
    expect(f.messages()).toEqual([]);
    expect(f.harness.queued("nextTurn")).toBe(1);
  });

  it("injected messages come before the model call; a throwing tap fails the run naming plugin and hook and keeps next-turn", async () => {
    const f = fixture();
    f.harness.hooks.beforeRun.tapPromise("broken", async () => {
      throw Object.assign(new Error("boom"), { code: "E_BROKEN" });
    });
    f.harness.nextTurn("keep me");
    await expect(f.harness.prompt("go")).rejects.toMatchObject({
      code: "hook",
      plugin: "broken",
      hook: "beforeRun",
      pluginCode: "E_BROKEN",
    });
    expect(f.harness.queued("nextTurn")).toBe(1);
    expect(f.harness.phase).toBe("idle");
  });
});

describe("beforeRequest and providerPayload (waterfalls)", () => {
  it("three taps transform messages and request options; the model and tools stay the snapshot's", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.beforeRequest.tapPromise("one", async (r) => ({
      ...r,
      options: { ...r.options, maxTokens: 100 },
    }));
    f.harness.hooks.beforeRequest.tapPromise("two", async (r) => ({
      ...r,
      options: { ...r.options, metadata: { user_id: "u1" }, maxTokens: (r.options.maxTokens ?? 0) + 1 },
    }));
    f.harness.hooks.beforeRequest.tapPromise("three", async (r) => ({
      ...r,
      messages: [...r.messages, { role: "user", content: "reminder", timestamp: 0 }],
    }));
    f.scripted.script([reply("ok")]);
    await f.harness.prompt("go");
    const request = f.scripted.requests[0];
    expect(request?.options).toMatchObject({ maxTokens: 101, metadata: { user_id: "u1" } });
    expect(request?.context.messages.at(-1)).toMatchObject({ content: "reminder" });
    expect(request?.context.tools?.map((t) => t.name)).toEqual(["echo"]);
    // the transform is per request: the session holds only what happened
    expect(f.messages().map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("providerPayload taps chain over the raw payload the provider is about to send", async () => {
    const sent: unknown[] = [];
    const f = fixture({
      streamFn: (model, context, options) => {
        const payload = { body: "raw" };
        const replaced = options?.onPayload?.(payload, model);
        void Promise.resolve(replaced).then((p) => sent.push(p));
        return f.scripted.collection.streamSimple(model, context, options);
      },
    });
    for (const name of ["p1", "p2", "p3"]) {
      f.harness.hooks.providerPayload.tapPromise(name, async (p) => ({ ...(p as object), [name]: true }));
    }
    f.scripted.script([reply("ok")]);
    await f.harness.prompt("go");
    expect(sent).toEqual([{ body: "raw", p1: true, p2: true, p3: true }]);
  });

  it("a throwing beforeRequest tap fails the run with a closed error message", async () => {
    const f = fixture();
    f.harness.hooks.beforeRequest.tapPromise("flaky", async () => {
      throw new Error("no network");
    });
    f.scripted.script([reply("never")]);
    await expect(f.harness.prompt("go")).rejects.toMatchObject({
      code: "hook",
      plugin: "flaky",
      hook: "beforeRequest",
    });
    const last = f.messages().at(-1);
    expect(last).toMatchObject({ role: "assistant", stopReason: "error" });
    expect(f.types().slice(-3)).toEqual(["save_point", "agent_end", "settled"]);
  });
});

describe("toolCall (waterfall, validated again)", () => {
  it("three rewrites chain in stage order and the tool receives the final arguments", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolCall.tapPromise({ name: "last", stage: Stage.last }, async (c) => ({
      ...c,
      args: { text: `${c.args.text}3` },
    }));
    f.harness.hooks.toolCall.tapPromise({ name: "first", stage: Stage.first }, async (c) => ({
      ...c,
      args: { text: `${c.args.text}1` },
    }));
    f.harness.hooks.toolCall.tapPromise("middle", async (c) => ({ ...c, args: { text: `${c.args.text}2` } }));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls.map((c) => c.args.text)).toEqual(["x123"]);
  });

  it("a rewrite that breaks the schema is refused, not executed", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolCall.tapPromise("breaker", async (c) => ({
      ...c,
      args: { text: { not: "a string" } },
    }));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    expect(f.messages()[2]).toMatchObject({
      role: "toolResult",
      isError: true,
      decision: { decision: "deny" },
    });
  });

  it("a rewrite that changes the call's name is a malformed result that fails the run", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolCall.tapPromise("renamer", async (c) => ({ ...c, name: "other" }));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await expect(f.harness.prompt("go")).rejects.toMatchObject({
      code: "hook",
      plugin: "renamer",
      hook: "toolCall",
    });
    expect(echo.calls).toHaveLength(0);
    expect(f.messages().map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
  });
});

describe("toolGate (strictest wins) and permissionAsk (first answer wins)", () => {
  it("a deny from an earlier gate is never undone by a later allow, and later taps do not run", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    const ran: string[] = [];
    f.harness.hooks.toolGate.tapPromise("allow-1", async () => {
      ran.push("allow-1");
      return { decision: "allow", reason: "fine" };
    });
    f.harness.hooks.toolGate.tapPromise("denier", async () => {
      ran.push("denier");
      return { decision: "deny", reason: "not today", rule: "r7" };
    });
    f.harness.hooks.toolGate.tapPromise("allow-2", async () => {
      ran.push("allow-2");
      return { decision: "allow", reason: "override?" };
    });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(ran).toEqual(["allow-1", "denier"]);
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)).toEqual([{ decision: "deny", by: "denier:r7", reason: "not today" }]);
    expect(f.messages()[2]).toMatchObject({
      role: "toolResult",
      isError: true,
      decision: { decision: "deny", by: "denier:r7", reason: "not today" },
      content: [{ type: "text", text: expect.stringContaining("not today") }],
    });
  });

  it("ask beats allow; permissionAsk's first answer wins and is recorded with who asked", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("allower", async () => ({ decision: "allow", reason: "ok" }));
    f.harness.hooks.toolGate.tapPromise("asker", async () => ({ decision: "ask", reason: "confirm writes" }));
    f.harness.hooks.toolGate.tapPromise("allower-2", async () => ({ decision: "allow", reason: "ok" }));
    const answered: string[] = [];
    f.harness.hooks.permissionAsk.tapPromise("silent", async () => {
      answered.push("silent");
      return undefined;
    });
    f.harness.hooks.permissionAsk.tapPromise("human", async (request) => {
      answered.push(`human saw ${request.verdict.by}: ${request.verdict.reason}`);
      return { decision: "allow", reason: "user said yes" };
    });
    f.harness.hooks.permissionAsk.tapPromise("never", async () => {
      answered.push("never");
      return { decision: "deny" };
    });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(answered).toEqual(["silent", "human saw asker: confirm writes"]);
    expect(echo.calls).toHaveLength(1);
    expect(f.messages()[2]).toMatchObject({
      decision: { decision: "allow", by: "human", askedBy: "asker", reason: "user said yes" },
    });
  });

  it("an ask that nobody answers is denied", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("asker", async () => ({ decision: "ask", reason: "confirm" }));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)[0]).toMatchObject({ decision: "deny", by: "asker" });
  });

  it("no opinion from anyone gives the harness default, which is configurable", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], defaultToolVerdict: "deny" });
    f.harness.hooks.toolGate.tapPromise("indifferent", async () => undefined);
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)[0]).toMatchObject({ decision: "deny", by: "harness:default" });
  });

  it("a gate that throws denies, naming the plugin, and reports plugin_error", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("crashy", async () => {
      throw new Error("policy file missing");
    });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)[0]).toMatchObject({
      decision: "deny",
      by: "crashy",
      reason: expect.stringContaining("crashy"),
    });
    expect(f.events.find((e) => e.type === "plugin_error")).toMatchObject({
      plugin: "crashy",
      hook: "toolGate",
    });
  });

  it("a gate that exceeds its timeout denies (fail closed)", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], failurePolicy: { tapTimeoutMs: 30 } });
    f.harness.hooks.toolGate.tapPromise("hung", () => new Promise(() => undefined));
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)[0]).toMatchObject({
      decision: "deny",
      by: "hung",
      reason: expect.stringContaining("timed out"),
    });
    const hung = await f.harness.close(10);
    expect(hung.map((c) => `${c.plugin}/${c.hook}`)).toEqual(["hung/toolGate"]);
  });

  it("a gate returning a malformed verdict denies", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("sloppy", async () => ({ decision: "yes" }) as never);
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    expect(decisions(f)[0]).toMatchObject({
      decision: "deny",
      by: "sloppy",
      reason: expect.stringContaining("malformed"),
    });
  });

  it("a second tapPromise that throws synchronously or returns a non-promise never hangs the hook", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolGate.tapPromise("fine", async () => undefined);
    f.harness.hooks.toolGate.tapPromise("sync-throw", (() => {
      throw new Error("sync");
    }) as never);
    f.harness.hooks.toolResult.tapPromise("fine", async (r) => r);
    f.harness.hooks.toolResult.tapPromise("not-a-promise", ((r: unknown) => r) as never);
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(decisions(f)[0]).toMatchObject({ decision: "deny", by: "sync-throw" });
  });
});

describe("toolResult (waterfall, each sees the prior patch)", () => {
  it("three taps rewrite the result in order before the model or the session sees it", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    const seen: string[] = [];
    for (const name of ["r1", "r2", "r3"]) {
      f.harness.hooks.toolResult.tapPromise(name, async (result, context: ToolHookContext) => {
        const text = result.content[0]?.type === "text" ? result.content[0].text : "";
        seen.push(`${name}:${text}:${context.call.name}`);
        return { ...result, content: [{ type: "text", text: `${text}|${name}` }] };
      });
    }
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(seen).toEqual(["r1:echo: x:echo", "r2:echo: x|r1:echo", "r3:echo: x|r1|r2:echo"]);
    expect(f.messages()[2]).toMatchObject({ content: [{ text: "echo: x|r1|r2|r3" }] });
  });

  it("a throwing toolResult tap withholds the result and fails the run; every call still has one result", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.harness.hooks.toolResult.tapPromise("redactor", async () => {
      throw new Error("regex exploded");
    });
    f.scripted.script([callTools(["echo", { text: "secret" }], ["echo", { text: "b" }]), reply("done")]);
    await expect(f.harness.prompt("go")).rejects.toMatchObject({
      code: "hook",
      plugin: "redactor",
      hook: "toolResult",
    });
    const results = f.messages().filter((m) => m.role === "toolResult");
    expect(results).toHaveLength(2);
    expect(JSON.stringify(results)).not.toContain("echo: secret");
  });
});

describe("beforeStop, beforeBranch, beforeCompact (bail: first answer wins)", () => {
  it("beforeStop may ask for one more turn; the first answer wins", async () => {
    const f = fixture();
    const ran: string[] = [];
    let asked = false;
    f.harness.hooks.beforeStop.tapPromise("quiet", async () => {
      ran.push("quiet");
      return undefined;
    });
    f.harness.hooks.beforeStop.tapPromise("checker", async () => {
      ran.push("checker");
      if (asked) return { decision: "stop" };
      asked = true;
      return { decision: "continue", message: "run the tests first" };
    });
    f.harness.hooks.beforeStop.tapPromise("never", async () => {
      ran.push("never");
      return { decision: "continue", message: "x" };
    });
    f.scripted.script([reply("done?"), reply("tests pass")]);
    await f.harness.prompt("go");
    expect(ran).toEqual(["quiet", "checker", "quiet", "checker"]);
    expect(f.messages().map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
  });

  it("beforeStop continuations are bounded", async () => {
    const f = fixture({ maxStopContinuations: 2 });
    f.harness.hooks.beforeStop.tapPromise("insatiable", async () => ({
      decision: "continue",
      message: "more",
    }));
    f.scripted.script([reply("1"), reply("2"), reply("3"), reply("4")]);
    await f.harness.prompt("go");
    expect(f.scripted.requests).toHaveLength(3);
  });

  it("beforeCompact and beforeBranch bail on the first answer, attributed to its tap", async () => {
    const f = fixture();
    for (const hook of [f.harness.hooks.beforeCompact, f.harness.hooks.beforeBranch]) {
      hook.tapPromise("pass", async () => undefined);
      hook.tapPromise("supplier", async () => ({ summary: "we tried X" }));
      hook.tapPromise("canceller", async () => ({ cancel: { reason: "never reached" } }));
    }
    const context = { signal: new AbortController().signal } as never;
    const compact = await runBail(
      f.harness.hooks,
      "beforeCompact",
      { trigger: "manual", tokensBefore: 10 },
      context,
    );
    const branch = await runBail(
      f.harness.hooks,
      "beforeBranch",
      { fromId: null, targetId: null, summarize: true },
      context,
    );
    expect(compact).toEqual({ summary: "we tried X", by: "supplier" });
    expect(branch).toEqual({ summary: "we tried X", by: "supplier" });
  });
});
