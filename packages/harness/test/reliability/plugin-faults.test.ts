/**
 * Plugin faults: for every hook, a tap that throws, one that never resolves and one
 * that returns a malformed result. The outcome follows the failure policy (gates fail
 * closed; transforms fail the run or operation with a `hook` error), names the plugin
 * and the hook, and the session stays consistent and usable.
 *
 * `providerPayload` has no malformed case: any value is a payload.
 */
import { describe, expect, it } from "vitest";
import { HarnessError } from "../../src/errors.js";
import type { HarnessEvent } from "../../src/events/event-types.js";
import { removeTaps } from "../../src/hooks/create-hooks.js";
import { HOOK_NAMES, type HookName } from "../../src/hooks/hook-table.js";
import type { ToolExecutionContext } from "../../src/tools.js";
import { providerError } from "../support/compaction.js";
import { echoTool, fixture } from "../support/harness-fixture.js";
import { callTools, reply } from "../support/scripted-model.js";
import { sessionProblems, withPayload } from "./support.js";

type Fault = "throws" | "never resolves" | "malformed";

const MALFORMED: Partial<Record<HookName, unknown>> = {
  beforeRun: { systemPrompt: 5, messages: "none" },
  beforeRequest: { messages: "none" },
  toolCall: { id: "someone-else", name: "echo", args: {} },
  toolGate: { decision: "maybe", reason: 1 },
  permissionAsk: { decision: "perhaps" },
  toolResult: { content: "not blocks" },
  toolUpdate: { content: "not blocks" },
  beforeRetry: { decision: "perhaps" },
  beforeStop: { decision: "whatever" },
  beforeCompact: { summary: 5 },
  beforeBranch: { summary: 5 },
};

const FAIL_CLOSED = new Set<HookName>(["toolGate", "permissionAsk"]);

function faultyTap(fault: Fault, hook: HookName) {
  return async (): Promise<unknown> => {
    if (fault === "throws") throw Object.assign(new Error(`broken ${hook}`), { code: "E_BROKEN" });
    if (fault === "never resolves") return new Promise(() => undefined);
    return MALFORMED[hook];
  };
}

const cases: [HookName, Fault][] = HOOK_NAMES.flatMap((hook) =>
  (["throws", "never resolves", "malformed"] as Fault[])
    .filter((fault) => fault !== "malformed" || MALFORMED[hook] !== undefined)
    .map((fault): [HookName, Fault] => [hook, fault]),
);

describe("plugin faults", () => {
  it("every hook has a case", () => {
    expect(new Set(cases.map(([hook]) => hook))).toEqual(new Set(HOOK_NAMES));
    expect(cases.length).toBeGreaterThanOrEqual(HOOK_NAMES.length * 3 - 1);
  });

  it.each(cases)(
    "a %s tap that %s: policy applied, plugin and hook named, session consistent",
    async (hook, fault) => {
      const plugin = `faulty-${hook}`;
      const echo = echoTool();
      // The tool reports progress, so `toolUpdate` runs.
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
        compaction: { keepRecentTokens: 16 },
        retry: { baseDelayMs: 0 },
      });
      const errors: Extract<HarnessEvent, { type: "plugin_error" }>[] = [];
      f.harness.on("plugin_error", (event) => {
        errors.push(event);
      });
      if (hook === "permissionAsk") {
        f.harness.hooks.toolGate.tapPromise("asker", async () => ({
          decision: "ask",
          reason: "check with a person",
        }));
      }
      let called = false;
      const body = faultyTap(fault, hook);
      (
        f.harness.hooks[hook] as unknown as {
          tapPromise(options: { name: string; timeout: number }, fn: () => Promise<unknown>): void;
        }
      ).tapPromise({ name: plugin, timeout: 25 }, () => {
        called = true;
        return body();
      });

      const structural = hook === "beforeCompact" || hook === "beforeBranch";
      if (structural) {
        f.scripted.script([callTools(["echo", { text: "x".repeat(400) }]), reply("one"), reply("two")]);
        await f.harness.prompt("first question with some length to it");
        await f.harness.prompt("second question");
        const before = f.session.entries().length;
        const operation =
          hook === "beforeCompact"
            ? f.harness.compact()
            : f.harness.navigateTree(f.session.entries()[0]?.id ?? null, { summary: "s" });
        const error = (await operation.catch((e: unknown) => e)) as HarnessError;
        expect(called).toBe(true);
        expect(error).toBeInstanceOf(HarnessError);
        expect(error).toMatchObject({ code: "hook", plugin, hook });
        expect(error.message).toContain(plugin);
        expect(f.session.entries()).toHaveLength(before);
      } else {
        // For `beforeRetry` the first request fails transiently.
        const first = hook === "beforeRetry" ? [providerError("overloaded")] : [];
        f.scripted.script([...first, callTools(["echo", { text: "x" }]), reply("done")]);
        const result = await f.harness.prompt("go").then(
          (outcome) => ({ outcome }),
          (error: unknown) => ({ error }),
        );
        expect(called).toBe(true);
        if (FAIL_CLOSED.has(hook)) {
          // Fail closed: the call is denied with a reason naming the plugin; the run goes on.
          expect(result).toMatchObject({ outcome: { status: "completed" } });
          const denied = f.messages().find((m) => m.role === "toolResult");
          expect(denied).toMatchObject({ isError: true, decision: { decision: "deny" } });
          expect(JSON.stringify(denied)).toContain(plugin);
          expect(echo.calls).toHaveLength(0);
          expect(errors.some((e) => e.plugin === plugin && e.hook === hook)).toBe(true);
        } else {
          // Transforms fail the run with a `hook` error naming plugin and hook, after settle.
          expect("error" in result).toBe(true);
          const error = (result as { error: HarnessError }).error;
          expect(error).toBeInstanceOf(HarnessError);
          expect(error).toMatchObject({ code: "hook", plugin, hook });
          expect(error.message).toContain(plugin);
          expect(error.message).toContain(hook);
        }
      }
      expect(f.harness.phase).toBe("idle");
      expect(sessionProblems(f.session)).toEqual([]);
      expect(f.session.buildContext().messages.at(-1)?.role).not.toBe("user");

      // The session stays usable: without the faulty plugin the next run completes.
      removeTaps(f.harness.hooks, plugin);
      removeTaps(f.harness.hooks, "asker");
      f.scripted.script([reply("fine again")]);
      await expect(f.harness.prompt("again")).resolves.toMatchObject({ status: "completed" });
      expect(sessionProblems(f.session)).toEqual([]);
    },
  );
});
