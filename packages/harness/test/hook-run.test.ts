/**
 * A hook call walks its taps as one ledger record with one shared pair of
 * reactions (hooks/hook-run.ts). What that must not change: a tap's deadline
 * counts from its own start, a tap given up on is ignored when it answers late
 * and is named in the ledger until it settles, and concurrent calls of one
 * hook never mix their payloads.
 */
import { describe, expect, it } from "vitest";
import { createHooks, DEFAULT_FAILURE_POLICY, type FailurePolicy } from "../src/hooks/create-hooks.js";
import { PluginDriver } from "../src/hooks/plugin-driver.js";
import { sleep } from "./support/harness-fixture.js";

function hooksWith(policy: Partial<FailurePolicy> = {}) {
  const driver = new PluginDriver();
  const reported: string[] = [];
  const full = { ...DEFAULT_FAILURE_POLICY, ...policy };
  const hooks = createHooks({
    driver,
    policy: () => full,
    report: (failure) => reported.push(failure.message),
  });
  return { driver, hooks, reported };
}

const context = () => ({ signal: new AbortController().signal, call: { id: "c1" } }) as never;
const gateCall = { id: "c1", name: "echo", args: {}, risk: "read" } as never;
const result = (text: string) => ({ content: [{ type: "text" as const, text }], isError: false });

describe("hook calls", () => {
  it("a tap after one that blocked synchronously still gets its whole timeout", async () => {
    const { hooks } = hooksWith();
    let hungAt = 0;
    hooks.toolGate.tapPromise("busy", async () => {
      const until = Date.now() + 200;
      while (Date.now() < until); // plugin code holding the thread
      return undefined;
    });
    hooks.toolGate.tapPromise({ name: "hung", timeout: 100 }, () => {
      hungAt = Date.now();
      return new Promise(() => undefined);
    });
    const verdict = await hooks.toolGate.promise(gateCall, context());
    expect(verdict).toMatchObject({ decision: "deny", by: "hung" });
    expect(Date.now() - hungAt).toBeGreaterThanOrEqual(95);
  });

  it("a skipped tap's late answer is ignored, and the ledger names it until it settles", async () => {
    const { driver, hooks, reported } = hooksWith({ transform: "skip-tap" });
    let answerLate: (value: unknown) => void = () => undefined;
    hooks.toolResult.tapPromise(
      { name: "late", timeout: 30 },
      () =>
        new Promise((resolve) => {
          answerLate = resolve as (value: unknown) => void;
        }),
    );
    hooks.toolResult.tapPromise("after", async (payload) => ({ ...payload, details: "after" }));
    const out = await hooks.toolResult.promise(result("x"), context());
    expect(out).toEqual({ ...result("x"), details: "after" });
    expect(reported).toEqual(['plugin "late" timed out in toolResult after 30 ms']);
    const inFlight = driver.inFlight();
    expect(inFlight.map((call) => [call.plugin, call.hook, call.toolCallId])).toEqual([
      ["late", "toolResult", "c1"],
    ]);
    expect(inFlight[0]?.startedAt).toBeGreaterThan(0);
    answerLate(result("too late"));
    await inFlight[0]?.settled;
    await sleep(1);
    expect(driver.inFlight()).toEqual([]);
  });

  it("concurrent calls of one hook keep their own payloads and answers", async () => {
    const { hooks } = hooksWith();
    hooks.toolResult.tapPromise("slow", async (payload) => {
      await sleep(payload.content[0]?.type === "text" && payload.content[0].text === "1" ? 20 : 1);
      return { ...payload, details: [payload.content[0]] };
    });
    hooks.toolResult.tap("sync", (payload) => ({ ...payload, isError: true }));
    const [one, two] = await Promise.all([
      hooks.toolResult.promise(result("1"), context()),
      hooks.toolResult.promise(result("2"), context()),
    ]);
    expect(one).toEqual({ ...result("1"), isError: true, details: [{ type: "text", text: "1" }] });
    expect(two).toEqual({ ...result("2"), isError: true, details: [{ type: "text", text: "2" }] });
  });
});
