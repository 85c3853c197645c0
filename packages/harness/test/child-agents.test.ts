/**
 * Child agents (`startChild`): the child's decision stack is the parent's taps plus
 * narrowing; nothing the child's own taps or setters do loosens a parent decision;
 * its session hangs in the parent's tree; its events reach the parent.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Type } from "typebox";
import { afterEach, describe, expect, it } from "vitest";
import { recoverChildren, startChild } from "../src/children/child-agents.js";
import type { HarnessEvent } from "../src/events/event-types.js";
import type { AgentHarness } from "../src/harness/agent-harness.js";
import type { HookContext } from "../src/hooks/hook-types.js";
import type { RecordedToolResult } from "../src/session/entries.js";
import { JsonlStorage } from "../src/session/jsonl-storage.js";
import { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/session-store.js";
import { createSessionHeader } from "../src/session/storage.js";
import type { AnyAgentTool } from "../src/tools.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A tool that runs a child on `prompt`, configured by `configure`, and reports what it recorded. */
function spawnTool(
  parent: () => AgentHarness,
  configure: (child: AgentHarness) => void = () => {},
  options: { activeTools?: string[] } = {},
) {
  const seen: { decisions: (string | undefined)[]; child?: AgentHarness } = { decisions: [] };
  const tool: AnyAgentTool = {
    name: "spawn",
    description: "spawn",
    parameters: Type.Object({ prompt: Type.String() }),
    execute: async (args: { prompt: string }, context) => {
      const child = startChild(parent(), {
        toolCallId: context.toolCallId,
        name: "task#1",
        excludeTools: ["spawn"],
        ...options,
      });
      seen.child = child;
      configure(child);
      await child.prompt(args.prompt);
      seen.decisions = child.session
        .entries()
        .flatMap((e) =>
          e.type === "message" && e.message.role === "toolResult"
            ? [(e.message as RecordedToolResult).decision?.by]
            : [],
        );
      await child.close();
      child.session.close();
      return { content: [{ type: "text", text: "spawned" }] };
    },
  };
  return { tool, seen };
}

describe("startChild", () => {
  it("the parent's gate taps decide the child's calls, with the child's context, and by names the agent", async () => {
    const echo = echoTool();
    const contexts: HookContext[] = [];
    let harness!: AgentHarness;
    const spawn = spawnTool(() => harness);
    const f = fixture({ tools: [echo.tool, spawn.tool] });
    harness = f.harness;
    harness.hooks.toolGate.tap("house", (call, context) => {
      contexts.push(context);
      return call.name === "echo" ? { decision: "deny", rule: "no-echo", reason: "quiet" } : undefined;
    });
    f.scripted.script([
      callTools(["spawn", { prompt: "go" }, "p1"]),
      callTools(["echo", { text: "hi" }, "c1"]),
      reply("child done"),
      reply("parent done"),
    ]);
    await harness.prompt("start");
    const runId = (f.events.find((e) => e.type === "agent_start") as { runId: string }).runId;
    expect(spawn.seen.decisions).toEqual([`house:no-echo in task#1 of run ${runId}`]);
    expect(echo.calls).toEqual([]);
    const child = contexts.find((c) => c.agent !== undefined);
    expect(child?.agent).toEqual({
      path: `task#1 of run ${runId}`,
      parentSessionId: harness.sessionId,
      parentToolCallId: "p1",
      inheritGrants: false,
    });
    expect(child?.session.id).toBe(spawn.seen.child?.sessionId);
    expect(child?.session.id).not.toBe(harness.sessionId);
  });

  it("a child's own allow is no opinion: the parent's default verdict still decides; its deny counts", async () => {
    const echo = echoTool();
    let harness!: AgentHarness;
    const spawn = spawnTool(
      () => harness,
      (child) => {
        child.hooks.toolGate.tap("loose", () => ({ decision: "allow", reason: "trust me" }));
        child.hooks.toolGate.tapPromise("tight", async (call) =>
          (call.args as { text?: string }).text === "b" ? { decision: "deny", reason: "not b" } : undefined,
        );
      },
    );
    const f = fixture({
      tools: [echo.tool, spawn.tool],
      defaultToolVerdict: (call) =>
        call.name === "spawn"
          ? { decision: "allow", reason: "spawning is fine" }
          : { decision: "deny", reason: "nothing else" },
    });
    harness = f.harness;
    f.scripted.script([
      callTools(["spawn", { prompt: "go" }, "p1"]),
      callTools(["echo", { text: "a" }, "c1"], ["echo", { text: "b" }, "c2"]),
      reply("child done"),
      reply("parent done"),
    ]);
    await harness.prompt("start");
    const runId = (f.events.find((e) => e.type === "agent_start") as { runId: string }).runId;
    expect(spawn.seen.decisions).toEqual([
      `harness:default in task#1 of run ${runId}`,
      `tight in task#1 of run ${runId}`,
    ]);
    expect(echo.calls).toEqual([]);
  });

  it("a child's tools only narrow: a wider activeTools, a new tool or a looser default verdict is refused", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool, { ...echoTool().tool, name: "other" }], activeTools: ["echo"] });
    expect(() =>
      startChild(f.harness, { toolCallId: "x", name: "t", activeTools: ["echo", "other"] }),
    ).toThrow(
      expect.objectContaining({
        code: "invalid_argument",
        message: expect.stringContaining('"other" is not active in the parent'),
      }),
    );
    const child = startChild(f.harness, { toolCallId: "x", name: "t" });
    expect(child.activeToolNames).toEqual(["echo"]);
    expect(() => child.setTools([...child.tools, { ...echoTool().tool, name: "fresh" }])).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => child.setDefaultToolVerdict("allow")).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    // Narrowing its own tools is fine.
    child.setActiveTools([]);
    child.setTools([]);
    expect(child.tools).toEqual([]);
    child.session.close();
  });

  it("an ask nobody answers in a child is denied, never parked, even when the parent parks", async () => {
    const echo = echoTool();
    let harness!: AgentHarness;
    const spawn = spawnTool(() => harness);
    const f = fixture({ tools: [echo.tool, spawn.tool], onUnanswered: "park" });
    harness = f.harness;
    harness.hooks.toolGate.tap("asker", (call) =>
      call.name === "echo" ? { decision: "ask", reason: "sure?" } : undefined,
    );
    f.scripted.script([
      callTools(["spawn", { prompt: "go" }, "p1"]),
      callTools(["echo", { text: "a" }, "c1"]),
      reply("child done"),
      reply("parent done"),
    ]);
    const outcome = await harness.prompt("start");
    expect(outcome.status).toBe("completed");
    expect(spawn.seen.decisions).toEqual([expect.stringMatching(/^asker in task#1 of run /)]);
    expect(echo.calls).toEqual([]);
  });

  it("a child may have its own model and system prompt; its requests pass the parent's beforeRequest taps", async () => {
    const f = fixture(
      { tools: [echoTool().tool] },
      { models: [{ id: "parent-model" }, { id: "child-model" }] },
    );
    const harness = f.harness;
    const childModel = { ...harness.model, id: "child-model" };
    const spawn: AnyAgentTool = {
      name: "spawn",
      description: "spawn",
      parameters: Type.Object({ prompt: Type.String() }),
      execute: async (args: { prompt: string }, context) => {
        const child = startChild(harness, {
          toolCallId: context.toolCallId,
          name: "task#1",
          model: childModel,
          systemPrompt: "You are the child.",
          excludeTools: ["spawn"],
        });
        await child.prompt(args.prompt);
        await child.close();
        child.session.close();
        return { content: [{ type: "text", text: "ok" }] };
      },
    };
    harness.setTools([...harness.tools, spawn]);
    const seenByParentTap: string[] = [];
    harness.hooks.beforeRequest.tap("redactor", (request, context) => {
      seenByParentTap.push(context.agent?.path ?? "parent");
      return request;
    });
    f.scripted.script([
      callTools(["spawn", { prompt: "go" }, "p1"]),
      reply("child done"),
      reply("parent done"),
    ]);
    await harness.prompt("start");
    expect(f.scripted.requests.map((r) => [r.modelId, r.context.systemPrompt ?? ""])).toEqual([
      ["parent-model", ""],
      ["child-model", "You are the child."],
      ["parent-model", ""],
    ]);
    expect(seenByParentTap).toEqual(["parent", expect.stringMatching(/^task#1 of run /), "parent"]);
  });

  it("the child's events reach the parent's listeners as child_event (stream deltas excepted)", async () => {
    let harness!: AgentHarness;
    const spawn = spawnTool(() => harness);
    const f = fixture({ tools: [echoTool().tool, spawn.tool] });
    harness = f.harness;
    f.scripted.script([
      callTools(["spawn", { prompt: "go" }, "p1"]),
      reply("child done"),
      reply("parent done"),
    ]);
    await harness.prompt("start");
    const forwarded = f.events.filter(
      (e): e is Extract<HarnessEvent, { type: "child_event" }> => e.type === "child_event",
    );
    expect(forwarded.length).toBeGreaterThan(0);
    expect(new Set(forwarded.map((e) => e.agent.toolCallId))).toEqual(new Set(["p1"]));
    const inner = forwarded.map((e) => e.event.type);
    expect(inner).toContain("agent_start");
    expect(inner).toContain("agent_end");
    expect(inner).not.toContain("message_update");
  });

  it("beside a JSONL parent the child session is a file under children/<parent id>/, linked to the call; recoverChildren repairs it", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-children-"));
    dirs.push(dir);
    const store = new SessionStore(dir);
    const parentSession = store.create();
    const f = fixture({ session: parentSession, tools: [echoTool().tool] });
    const child = startChild(f.harness, { toolCallId: "p9", name: "task#3" });
    const file = child.session.storage.path as string;
    expect(path.dirname(file)).toBe(path.join(dir, "children", parentSession.id));
    expect(child.session.header.parent).toEqual({
      sessionId: parentSession.id,
      toolCallId: "p9",
      agentPath: `task#3 of session ${parentSession.id}`,
    });
    // A run that died with a call open: the journal says it started, nothing closed it.
    child.session.appendMessage({ role: "user", content: "work", timestamp: 1 });
    child.session.appendJournal({ event: "run_start", runId: "r1" } as never);
    child.session.close();
    expect(store.list().map((s) => s.id)).toEqual([parentSession.id]);
    const reports = recoverChildren(f.harness);
    expect(reports).toEqual([
      { sessionId: child.sessionId, report: expect.objectContaining({ interruptedRunId: "r1" }) },
    ]);
    const reopened = Session.open(JsonlStorage.open(file));
    expect(reopened.journal().some((r) => r.event === "run_end")).toBe(true);
    reopened.close();
    expect(recoverChildren(f.harness)).toEqual([]);
    parentSession.close();
    expect(createSessionHeader()).not.toHaveProperty("parent");
  });
});
