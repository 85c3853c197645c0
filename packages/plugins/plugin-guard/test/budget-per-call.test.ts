/**
 * Budgets are decided per call, in call order (issue 30): within one model
 * response, exactly the first N calls the guard allows run; the rest are denied
 * with the budget's reason; the stop never cancels a call the guard allowed.
 * The tool here is real: each call writes a marker file, and the test counts
 * the files on disk rather than trusting the tool's own bookkeeping.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, type RecordedToolResult, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import guard, { type GuardOptions } from "../src/index.js";

const BUDGET_REASON = "run budget exhausted: 2 of max 2 tool calls used (perRun.maxToolCalls)";

let dir: string;
let t: TestHarness | undefined;
/** Whether a running call's signal had been aborted when it finished. */
let cancelledWhileRunning: boolean[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "rein-guard-"));
  cancelledWhileRunning = [];
});
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `<name>.marker`; it takes a moment, so a stop during the batch would catch it running. */
const markerTool = (executionMode: "parallel" | "sequential") =>
  defineTool({
    name: "mark",
    description: "Write a marker file",
    risk: "write",
    executionMode,
    parameters: Type.Object({ name: Type.String() }),
    execute: async (args, context) => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      cancelledWhileRunning.push(context.signal.aborted);
      writeFileSync(join(dir, `${args.name}.marker`), args.name);
      return { content: [{ type: "text", text: `marked ${args.name}` }] };
    },
  });

const markers = () => readdirSync(dir).sort();
const calls = (...names: string[]) => ({
  toolCalls: names.map((name) => ({ name: "mark", args: { name } })),
});

async function guarded(
  mode: "parallel" | "sequential",
  options: Partial<GuardOptions>,
  script: Parameters<TestHarness["script"]>,
) {
  t = await createTestHarness({ plugins: [[guard, options]], tools: [markerTool(mode)], script });
  return t;
}

const results = (h: TestHarness) =>
  h.messages().filter((m): m is RecordedToolResult => m.role === "toolResult");

describe.each(["parallel", "sequential"] as const)("perRun.maxToolCalls with %s tools", (mode) => {
  it("five calls in one response, budget 2: the first two run, the other three are denied with the budget's reason", async () => {
    const h = await guarded(mode, { perRun: { maxToolCalls: 2 } }, [
      calls("a", "b", "c", "d", "e"),
      "unused",
    ]);
    const outcome = await h.prompt("go");

    expect(markers()).toEqual(["a.marker", "b.marker"]);
    // The stop did not reach the calls the guard had allowed.
    expect(cancelledWhileRunning).toEqual([false, false]);
    expect(outcome).toMatchObject({ status: "aborted", reason: BUDGET_REASON });
    expect(h.requests).toHaveLength(1);

    const [a, b, c, d, e] = results(h);
    expect([a?.isError, b?.isError]).toEqual([false, false]);
    expect(a?.decision).toMatchObject({ decision: "allow" });
    expect(b?.decision).toMatchObject({ decision: "allow" });
    expect(c).toMatchObject({ isError: true, decision: { decision: "deny", by: "guard:max-tool-calls" } });
    expect(c?.decision?.reason).toContain(BUDGET_REASON);
    for (const later of [d, e]) {
      expect(later).toMatchObject({
        isError: true,
        decision: { decision: "deny", by: "harness:stopped", reason: BUDGET_REASON },
      });
    }
    // Every refusal is a recorded decision, in call order.
    expect(h.decisions().map((x) => x.decision)).toEqual(["allow", "allow", "deny", "deny", "deny"]);
  });

  it("a budget spent across responses: calls run until exactly N have run, in call order", async () => {
    const h = await guarded(mode, { perRun: { maxToolCalls: 3 } }, [
      calls("a", "b"),
      calls("c", "d", "e"),
      "unused",
    ]);
    const outcome = await h.prompt("go");
    expect(markers()).toEqual(["a.marker", "b.marker", "c.marker"]);
    expect(outcome.status).toBe("aborted");
    expect(h.requests).toHaveLength(2);
    expect(results(h).map((r) => r.decision?.by)).toEqual([
      "harness:default",
      "harness:default",
      "harness:default",
      "guard:max-tool-calls",
      "harness:stopped",
    ]);
  });

  it("a budget of 0 runs nothing: the first call is denied and the rest are refused", async () => {
    const h = await guarded(mode, { perRun: { maxToolCalls: 0 } }, [calls("a", "b"), "unused"]);
    await h.prompt("go");
    expect(markers()).toEqual([]);
    expect(results(h).map((r) => r.decision?.decision)).toEqual(["deny", "deny"]);
  });
});

describe.each(["parallel", "sequential"] as const)("the other per-run budgets with %s tools", (mode) => {
  it.each([
    ["maxTurns", { maxTurns: 2 }, "guard:max-turns"],
    ["maxTokens", { maxTokens: 1 }, "guard:max-tokens"],
  ] as const)(
    "%s: a response past the budget runs none of its calls; the first is denied by the budget, the rest refused with its reason",
    async (_name, perRun, by) => {
      // maxTokens: 1 is spent by the first response itself, so even it may not run tools.
      const first = by === "guard:max-turns" ? calls("a", "b") : calls("x", "y", "z");
      const h = await guarded(mode, { perRun }, [first, calls("c", "d", "e"), "unused"]);
      const outcome = await h.prompt("go");
      expect(outcome.status).toBe("aborted");
      const ran = by === "guard:max-turns" ? ["a.marker", "b.marker"] : [];
      expect(markers()).toEqual(ran);
      const refused = results(h).slice(ran.length);
      expect(refused.map((r) => r.decision?.by)).toEqual([by, "harness:stopped", "harness:stopped"]);
      for (const r of refused.slice(1)) expect(r.decision?.reason).toBe(outcome.reason);
    },
  );
});

describe("perSession.maxToolCalls", () => {
  it("counts the earlier runs: the second run gets only what is left, decided per call", async () => {
    const h = await guarded("parallel", { perSession: { maxToolCalls: 3 } }, [
      calls("a", "b"),
      "first done",
      calls("c", "d", "e"),
      "unused",
    ]);
    expect((await h.prompt("first")).status).toBe("completed");
    const second = await h.prompt("second");
    expect(markers()).toEqual(["a.marker", "b.marker", "c.marker"]);
    expect(second).toMatchObject({
      status: "aborted",
      reason: "session budget exhausted: 3 of max 3 tool calls used (perSession.maxToolCalls)",
    });
  });
});

describe("the person's abort still cancels", () => {
  it("abort() during an allowed call cancels it and no later allowed call starts", async () => {
    const h = await guarded("sequential", { perRun: { maxToolCalls: 5 } }, [calls("a", "b", "c"), "unused"]);
    h.harness.on("tool_execution_start", () => h.harness.abort("the person pressed Ctrl-C"));
    const outcome = await h.prompt("go");
    expect(outcome).toMatchObject({ status: "aborted", reason: "the person pressed Ctrl-C" });
    // The running call saw the abort; the two after it never started.
    expect(cancelledWhileRunning).toEqual([true]);
    expect(markers()).toEqual(["a.marker"]);
    expect(results(h).map((r) => r.content[0]?.type === "text" && r.content[0].text)).toEqual([
      "marked a",
      "not executed: the run was aborted before this call started",
      "not executed: the run was aborted before this call started",
    ]);
  });
});
