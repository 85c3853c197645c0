/**
 * Reentrancy: listeners and taps call every public harness API documented as
 * allowed while busy (setters, getters, queue operations, session writes, abort)
 * from every event and every hook. Nothing deadlocks (each run settles), nothing is
 * reordered (history stays call -> results, pending writes after), nothing is lost
 * (every queued message and write lands exactly once), and structural operations
 * called from inside a run reject `busy` without re-entering.
 */
import type { Context } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import type { EventType, HarnessEvent } from "../../src/events/event-types.js";
import type { AgentHarness } from "../../src/harness/agent-harness.js";
import { HOOK_NAMES, type HookName } from "../../src/hooks/hook-table.js";
import type { ToolExecutionContext } from "../../src/tools.js";
import { providerError } from "../support/compaction.js";
import { echoTool, fixture } from "../support/harness-fixture.js";
import { callTools, fauxAssistantMessage } from "../support/scripted-model.js";
import { sessionProblems, textOf, withPayload } from "./support.js";

/** The model: tool calls for the first request of a run, text after. */
const model = (context: Context) => {
  const last = context.messages.at(-1);
  return last?.role === "user" && textOf(last) === "go"
    ? callTools(["echo", { text: "a" }], ["echo", { text: "b" }])
    : fauxAssistantMessage(`ack ${context.messages.length}`);
};

function reentrantFixture(hook?: HookName) {
  const echo = echoTool();
  // The tool reports progress (so `toolUpdate` runs); for `beforeRetry` the first request fails transiently.
  const execute = echo.tool.execute;
  const tool = {
    ...echo.tool,
    execute: (args: never, context: ToolExecutionContext) => {
      context.update({ content: [{ type: "text" as const, text: "working" }] });
      return execute(args, context);
    },
  };
  const f = fixture({
    tools: [tool],
    streamFn: withPayload(() => f.scripted.collection),
    retry: { baseDelayMs: 0 },
  });
  const steps = Array.from({ length: 60 }, () => model);
  f.scripted.script(hook === "beforeRetry" ? [providerError("overloaded"), ...steps] : steps);
  return f;
}

/** Calls every structural operation; each must reject (or throw) `busy` without running. */
function tryStructural(harness: AgentHarness, codes: string[]) {
  const record = (error: unknown) => codes.push((error as { code?: string }).code ?? String(error));
  harness.prompt("re-entered").then(() => codes.push("prompt ran"), record);
  harness.compact().then(() => codes.push("compact ran"), record);
  harness.navigateTree(null).then(() => codes.push("navigateTree ran"), record);
  try {
    harness.fork("anything", undefined as never);
    codes.push("fork ran");
  } catch (error) {
    record(error);
  }
}

/** Every setter, with values that keep the run meaningful. */
function callSetters(harness: AgentHarness, n: number) {
  harness.setModel(harness.model);
  harness.setThinkingLevel(n % 2 === 0 ? "low" : "off");
  harness.setTools([...harness.tools]);
  harness.setActiveTools(undefined);
  harness.setSystemPrompt(`prompt ${n}`);
  harness.setResources({ n });
  harness.setRequestOptions({ maxTokens: 1000 + n });
  harness.setQueueModes({ steer: "one-at-a-time", followUp: "one-at-a-time" });
  harness.setDefaultToolVerdict("allow");
  harness.setCompactionSettings({ enabled: true });
  harness.setRetrySettings({ baseDelayMs: 0 });
}

function readGetters(harness: AgentHarness) {
  return [
    harness.phase,
    harness.model.id,
    harness.thinkingLevel,
    harness.tools.length,
    harness.activeToolNames.length,
    harness.snapshot?.turnId,
    harness.queued("steer"),
    harness.pendingWrites.length,
    harness.recovery,
    harness.session.buildContext().messages.length,
  ];
}

const userTexts = (f: ReturnType<typeof fixture>) =>
  f.session
    .entries()
    .flatMap((e) => (e.type === "message" && e.message.role === "user" ? [textOf(e.message)] : []));
const customs = (f: ReturnType<typeof fixture>) =>
  f.session.entries().flatMap((e) => (e.type === "custom" ? [String(e.data)] : []));

/** Events our own calls cause; reacting to them with calls that emit again would never end. */
const ECHOES = new Set<EventType>(["config_change", "queue_update", "plugin_error"]);

describe("reentrancy", () => {
  it("listeners calling every allowed API from every event: no deadlock, no reordering, nothing lost", async () => {
    const f = reentrantFixture();
    const busyCodes: string[] = [];
    const pushed: string[] = [];
    const written: string[] = [];
    const seen = new Set<EventType>();
    const handled = new Set<string>();
    let n = 0;
    f.harness.subscribe((event: HarnessEvent) => {
      seen.add(event.type);
      readGetters(f.harness);
      if (event.type === "settled") return; // idle again: structural calls would (rightly) run
      // Each event type's first delivery in each run calls everything (every delivery
      // would multiply: each setter call is itself a config_change event).
      const key = `${f.harness.snapshot?.runId ?? ""}:${event.type}`;
      if (handled.has(key)) return;
      handled.add(key);
      n++;
      tryStructural(f.harness, busyCodes);
      const note = `w-${n}`;
      f.harness.appendEntry({ type: "custom", customType: "reentrant", data: note });
      written.push(note);
      const target = f.session.entries().find((e) => e.type === "message");
      if (target) f.harness.label(target.id, `label ${n}`);
      if (ECHOES.has(event.type)) return;
      callSetters(f.harness, n);
      if (n <= 12) {
        const queue = (["steer", "followUp", "nextTurn"] as const)[n % 3] as
          | "steer"
          | "followUp"
          | "nextTurn";
        const text = `${queue}-${n}`;
        f.harness[queue](text);
        pushed.push(text);
      }
    });

    const first = await f.harness.prompt("go");
    expect(first.status).toBe("completed");
    await f.harness.waitForIdle();
    // Next-turn messages accepted during the run wait for the next prompt.
    const second = await f.harness.prompt("next");
    expect(second.status).toBe("completed");
    await f.harness.waitForIdle();

    expect(busyCodes.length).toBeGreaterThan(0);
    expect(busyCodes.every((code) => code === "busy")).toBe(true);
    for (const type of [
      "agent_start",
      "turn_start",
      "message_end",
      "tool_execution_start",
      "turn_end",
      "save_point",
      "agent_end",
    ] as const) {
      expect(seen.has(type)).toBe(true);
    }
    const texts = userTexts(f);
    expect(pushed.length).toBeGreaterThanOrEqual(6);
    for (const text of pushed) expect(texts.filter((t) => t === text)).toEqual([text]);
    expect([f.harness.queued("steer"), f.harness.queued("followUp"), f.harness.queued("nextTurn")]).toEqual([
      0, 0, 0,
    ]);
    const notes = customs(f);
    expect(notes.filter((note, i) => notes.indexOf(note) !== i)).toEqual([]);
    expect(notes.sort()).toEqual([...written].sort());
    expect(f.harness.pendingWrites).toEqual([]);
    expect(sessionProblems(f.session)).toEqual([]);
  });

  it("abort from inside any event's listener settles the run cleanly and clears steer and follow-up", async () => {
    const reference = reentrantFixture();
    const types: EventType[] = [];
    reference.harness.subscribe((event) => {
      if (!types.includes(event.type) && event.type !== "settled") types.push(event.type);
    });
    await reference.harness.prompt("go");
    expect(types.length).toBeGreaterThan(8);

    for (const type of types) {
      const f = reentrantFixture();
      let fired = false;
      f.harness.subscribe((event) => {
        if (event.type !== type || fired) return;
        fired = true;
        f.harness.steer(`dropped at ${type}`);
        f.harness.followUp(`dropped too at ${type}`);
        f.harness.abort(`stop at ${type}`);
        tryStructural(f.harness, []);
      });
      const outcome = await f.harness.prompt("go");
      await f.harness.waitForIdle();
      expect(fired).toBe(true);
      expect(["completed", "aborted"]).toContain(outcome.status);
      expect(f.harness.phase).toBe("idle");
      expect([f.harness.queued("steer"), f.harness.queued("followUp")]).toEqual([0, 0]);
      expect(userTexts(f).some((t) => t.startsWith("dropped"))).toBe(false);
      expect(sessionProblems(f.session)).toEqual([]);
      const cleared = f.session.journal().filter((r) => r.event === "queue_clear");
      expect(cleared.length).toBeGreaterThan(0);
      await expect(f.harness.prompt("again")).resolves.toMatchObject({ status: "completed" });
      expect(sessionProblems(f.session)).toEqual([]);
    }
  });

  it("taps of every run hook calling queue operations, session writes, setters and structural operations", async () => {
    const runHooks = HOOK_NAMES.filter((hook) => hook !== "beforeCompact" && hook !== "beforeBranch");
    for (const hook of runHooks) {
      const f = reentrantFixture(hook);
      const busyCodes: string[] = [];
      let calls = 0;
      if (hook === "permissionAsk") {
        f.harness.hooks.toolGate.tapPromise("asker", async () => ({ decision: "ask", reason: "ask" }));
      }
      (
        f.harness.hooks[hook as HookName] as unknown as {
          tapPromise(name: string, fn: (p: unknown, c: never) => Promise<unknown>): void;
        }
      ).tapPromise(
        "reentrant",
        async (
          _payload,
          context: {
            queues: { steer(m: string): void; followUp(m: string): void };
            session: { append(e: unknown): void };
          },
        ) => {
          calls++;
          if (calls === 1) {
            context.queues.steer(`steer from ${hook}`);
            context.queues.followUp(`follow-up from ${hook}`);
          }
          context.session.append({ type: "custom", customType: "tap", data: `${hook}-${calls}` });
          callSetters(f.harness, calls);
          tryStructural(f.harness, busyCodes);
          return hook === "permissionAsk" ? { decision: "allow" } : undefined;
        },
      );
      const outcome = await f.harness.prompt("go");
      await f.harness.waitForIdle();
      expect(outcome.status).toBe("completed");
      expect({ hook, calls: calls > 0 }).toEqual({ hook, calls: true });
      expect(busyCodes.length).toBe(calls * 4);
      expect(busyCodes.every((code) => code === "busy")).toBe(true);
      const texts = userTexts(f);
      expect({ hook, texts }).toEqual({
        hook,
        texts: expect.arrayContaining([`steer from ${hook}`, `follow-up from ${hook}`]),
      });
      expect(texts.filter((t) => t.endsWith(`from ${hook}`))).toHaveLength(2);
      expect(customs(f).sort()).toEqual(Array.from({ length: calls }, (_, i) => `${hook}-${i + 1}`).sort());
      expect(f.harness.pendingWrites).toEqual([]);
      expect(sessionProblems(f.session)).toEqual([]);
    }
  });
});
