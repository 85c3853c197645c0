import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type AssistantMessage,
  definePlugin,
  defineTool,
  evaluateToolCall,
  type GateVerdict,
  type ToolGateCall,
  type ToolHookContext,
  Type,
} from "../src/index.js";
import { checkToolCall, createTestHarness } from "../src/testing/index.js";

/** A hand-built assistant message (what a test gets when it needs full control of a reply). */
function fauxLikeReply(text: string): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "faux",
    provider: "faux",
    model: "faux",
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

const echo = defineTool({
  name: "echo",
  description: "Echo text",
  risk: "read",
  parameters: Type.Object({ text: Type.String() }),
  execute: (args) => ({ content: [{ type: "text", text: `echo:${args.text}` }] }),
});

describe("createTestHarness", () => {
  it("accepts compact script steps: text, { text }, { toolCalls }, a message and a function", async () => {
    const t = await createTestHarness({
      tools: [echo],
      script: [
        { toolCalls: [{ name: "echo", args: { text: "a" }, id: "call-1" }] },
        (request) => `saw ${request.context.messages.length} messages`,
      ],
    });
    await t.prompt("first");
    t.script({ text: "second answer" }, fauxLikeReply("third answer"), "fourth");
    await t.prompt("second");
    await t.prompt("third");
    await t.prompt("fourth");
    const texts = t
      .messages()
      .filter((m) => m.role === "assistant")
      .map((m) => (m.role === "assistant" ? m.content.find((c) => c.type === "text") : undefined))
      .map((c) => (c?.type === "text" ? c.text : undefined));
    expect(texts).toEqual([undefined, "saw 3 messages", "second answer", "third answer", "fourth"]);
    expect(t.eventsOf("tool_execution_end")).toMatchObject([{ toolCallId: "call-1", toolName: "echo" }]);
    await t.dispose();
  });

  it("records what the model received, including tool results and the system prompt", async () => {
    const t = await createTestHarness({
      tools: [echo],
      config: { systemPrompt: "be brief" },
      script: [{ toolCalls: [{ name: "echo", args: { text: "x" } }] }, "ok"],
    });
    await t.prompt("go");
    expect(t.requests).toHaveLength(2);
    expect(t.requests[0]?.context.systemPrompt).toBe("be brief");
    expect(t.requests[1]?.context.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    await t.dispose();
  });

  it("types eventsOf by event type", async () => {
    const t = await createTestHarness({ script: ["hi"] });
    await t.prompt("hello");
    const ends = t.eventsOf("agent_end");
    expectTypeOf<(typeof ends)[number]["status"]>().toEqualTypeOf<
      "completed" | "aborted" | "error" | "blocked" | "parked"
    >();
    expect(ends.map((e) => e.status)).toEqual(["completed"]);
    expect(t.events.at(-1)?.type).toBe("settled");
    await t.dispose();
  });

  it("persists an error reply when the script runs out (no network fallback)", async () => {
    const t = await createTestHarness();
    await t.prompt("anyone?");
    const last = t.messages().at(-1);
    expect(last).toMatchObject({ role: "assistant", stopReason: "error" });
    await t.dispose();
  });

  it("unregisters the scripted model on dispose even when plugins fail to clean up", async () => {
    const plugin = definePlugin({
      name: "bad-cleanup",
      setup: () => () => {
        throw new Error("nope");
      },
    });
    const t = await createTestHarness({ plugins: [plugin] });
    await expect(t.dispose()).rejects.toMatchObject({ code: "plugin_cleanup" });
  });
});

describe("checkToolCall / evaluateToolCall", () => {
  it("takes a harness or a test harness; a tool name the harness does not have is refused only when the test opts in", async () => {
    const t = await createTestHarness({ tools: [echo] });
    for (const check of [checkToolCall, evaluateToolCall]) {
      expect(await check(t.harness, { name: "echo", args: { text: "a" } })).toMatchObject({
        decision: "allow",
        by: "harness:default",
        registered: true,
        facts: {},
      });
    }
    // A typo fails the test (unknown-tool-probe.test.ts); opting in, it is denied as a run would.
    for (const refused of [
      await checkToolCall(t, { name: "ecoh", args: {} }, { unregistered: "refuse" }),
      await t.checkToolCall({ name: "ecoh", args: {} }, { unregistered: "refuse" }),
    ]) {
      expect(refused).toMatchObject({ decision: "deny", by: "harness", registered: false });
      expect(refused.reason).toContain('unknown tool "ecoh"');
    }
    // `rein replay` re-decides calls to removed tools on a stand-in.
    expect(await evaluateToolCall(t, { name: "ecoh", args: {} })).toMatchObject({
      decision: "allow",
      registered: false,
    });
    await t.dispose();
  });

  it("with trail: true, evaluateToolCall returns every tap's step, attributed to its plugin and rule", async () => {
    const loud = definePlugin({
      name: "loud",
      setup(rein) {
        rein.hooks.toolCall.tap("loud", (call) => ({
          ...call,
          args: { text: String(call.args.text).toUpperCase() },
        }));
      },
    });
    const rules = definePlugin({
      name: "rules",
      setup(rein) {
        rein.hooks.toolGate.tap("rules", () => ({
          decision: "ask",
          reason: "confirm",
          rule: "confirm-echo",
        }));
      },
    });
    const t = await createTestHarness({ plugins: [loud, rules], tools: [echo] });
    const evaluation = await evaluateToolCall(
      t,
      { name: "echo", args: { text: "hi" } },
      { skipPermission: true, trail: true },
    );
    expect(evaluation).toMatchObject({ decision: "ask", by: "rules:confirm-echo", args: { text: "HI" } });
    expect(evaluation.trail).toEqual([
      { hook: "toolCall", by: "loud", answer: "rewrite", args: { text: "HI" } },
      { hook: "toolGate", by: "rules:confirm-echo", answer: "ask", reason: "confirm" },
    ]);
    expect(await evaluateToolCall(t, { name: "echo", args: { text: "hi" } })).not.toHaveProperty("trail");
    await t.dispose();
  });

  it("with explainAfterDeny, the plugins after the deciding deny are asked and shown as not consulted; the verdict stands", async () => {
    let laterCalls = 0;
    const strict = definePlugin({
      name: "strict",
      setup(rein) {
        rein.hooks.toolGate.tap("strict", () => ({ decision: "deny", reason: "never", rule: "no-echo" }));
      },
    });
    const lenient = definePlugin({
      name: "lenient",
      setup(rein) {
        rein.hooks.toolGate.tap("lenient", () => {
          laterCalls += 1;
          return { decision: "allow", reason: "echo is harmless" };
        });
      },
    });
    const t = await createTestHarness({ plugins: [strict, lenient], tools: [echo] });
    const probe = { name: "echo", args: { text: "hi" } };
    const plain = await evaluateToolCall(t, probe, { trail: true });
    expect(laterCalls).toBe(0);
    const explained = await evaluateToolCall(t, probe, { explainAfterDeny: true });
    expect(laterCalls).toBe(1);
    const { trail: plainTrail, ...plainVerdict } = plain;
    const { trail, ...verdict } = explained;
    expect(verdict).toEqual(plainVerdict);
    expect(verdict).toMatchObject({ decision: "deny", by: "strict:no-echo", reason: "never" });
    expect(trail).toEqual([
      ...(plainTrail ?? []),
      { hook: "toolGate", by: "lenient", answer: "allow", reason: "echo is harmless", consulted: false },
    ]);
    await t.dispose();
  });

  it("carries the facts of a tool that declares paths, for assertions", async () => {
    const open = defineTool({
      name: "open",
      description: "Open a file",
      parameters: Type.Object({ path: Type.String() }),
      paths: { path: "file" },
      execute: () => ({ content: [] }),
    });
    const cwd = realpathSync(mkdtempSync(join(tmpdir(), "rein-facts-")));
    mkdirSync(join(cwd, "src"));
    writeFileSync(join(cwd, ".env"), "");
    symlinkSync("../.env", join(cwd, "src/config"));
    const t = await createTestHarness({ tools: [open], config: { cwd } });
    const verdict = await t.checkToolCall({ name: "open", args: { path: "src/./config" } });
    expect(verdict.facts.paths).toEqual([
      {
        arg: "path",
        kind: "file",
        input: "src/./config",
        absolute: join(cwd, ".env"),
        relative: ".env",
        inside: true,
        lexical: join(cwd, "src/config"),
        root: cwd,
      },
    ]);
    const outside = await t.checkToolCall({ name: "open", args: { path: "../x" } });
    expect(outside.facts.paths?.[0]).toMatchObject({
      relative: expect.stringMatching(/^\.\.\//),
      inside: false,
    });
    await t.dispose();
  });

  it("returns the args after toolCall rewrites, validated again", async () => {
    const rewrite = definePlugin({
      name: "shout",
      setup: (rein) =>
        rein.hooks.toolCall.tap("shout", (call) => ({
          ...call,
          args: { text: String(call.args.text).toUpperCase() },
        })),
    });
    const t = await createTestHarness({ plugins: [rewrite], tools: [echo] });
    expect(await t.checkToolCall({ name: "echo", args: { text: "hi" } })).toMatchObject({
      args: { text: "HI" },
    });
    await t.dispose();
  });

  it("denies (by harness) arguments that do not match the tool's schema, as a run would", async () => {
    const t = await createTestHarness({ tools: [echo] });
    expect(await t.checkToolCall({ name: "echo", args: { nope: 1 } })).toMatchObject({
      decision: "deny",
      by: "harness",
    });
    await t.dispose();
  });

  it("runs permissionAsk for an ask, and reports who asked and who answered", async () => {
    const asker = definePlugin({
      name: "asker",
      setup: (rein) => rein.hooks.toolGate.tap("asker", () => ({ decision: "ask", reason: "sure?" })),
    });
    const answerer = definePlugin({
      name: "answerer",
      setup: (rein) => rein.hooks.permissionAsk.tap("answerer", () => ({ decision: "allow" })),
    });
    const t = await createTestHarness({ plugins: [asker, answerer], tools: [echo] });
    expect(await t.checkToolCall({ name: "echo", args: { text: "a" } })).toMatchObject({
      decision: "allow",
      by: "answerer",
      askedBy: "asker",
      reason: "sure?",
      gate: { decision: "ask", by: "asker" },
    });
    await t.dispose();
  });

  it("gives a gate the call's risk and a read-only context, and can override the risk", async () => {
    const seen: { call: ToolGateCall; cwd: string; tool: string }[] = [];
    const spy = definePlugin({
      name: "spy",
      setup: (rein) =>
        rein.hooks.toolGate.tap("spy", (call, context) => {
          seen.push({ call, cwd: context.config.cwd, tool: context.call.tool.name });
          return undefined;
        }),
    });
    const t = await createTestHarness({ plugins: [spy], tools: [echo], config: { cwd: "/w" } });
    await t.checkToolCall({ name: "echo", args: { text: "a" } });
    // A probe cannot give a registered tool another risk: the test would pass on a lie.
    await expect(
      t.checkToolCall({ name: "echo", args: { text: "a" }, risk: "network" }),
    ).rejects.toMatchObject({
      code: "invalid_tool",
    });
    await t.checkToolCall(
      { name: "gone", args: { anything: true }, risk: "exec" },
      { unregistered: "evaluate" },
    );
    expect(seen.map((s) => [s.call.name, s.call.risk, s.cwd, s.tool])).toEqual([
      ["echo", "read", "/w", "echo"],
      ["gone", "exec", "/w", "gone"],
    ]);
    await t.dispose();
  });

  it("keeps hook typing for plugin authors (payloads and results autocomplete)", () => {
    definePlugin({
      name: "typed-hooks",
      setup(rein) {
        rein.hooks.toolGate.tap("typed-hooks", (call, context) => {
          expectTypeOf(call).toEqualTypeOf<ToolGateCall>();
          expectTypeOf(context).toEqualTypeOf<ToolHookContext>();
          const verdict: GateVerdict = { decision: "deny", reason: "r", rule: "x" };
          return verdict;
        });
        // @ts-expect-error a gate verdict's decision is allow | ask | deny.
        rein.hooks.toolGate.tap("typed-hooks", () => ({ decision: "maybe", reason: "r" }));
      },
    });
  });
});
