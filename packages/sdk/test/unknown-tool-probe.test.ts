/**
 * The test kit cannot pass a policy test for the wrong reason (issue 30): a
 * tool name the harness does not have makes `checkToolCall` reject with
 * `unknown_tool`, naming the closest registered name, unless the test opts in
 * to probing an unregistered tool (`unregistered: "refuse" | "evaluate"`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { definePlugin, defineTool, evaluateToolCall, isSdkError, Type } from "../src/index.js";
import { checkToolCall, createTestHarness, type TestHarness } from "../src/testing/index.js";

const fileTool = (name: string) =>
  defineTool({
    name,
    description: `${name} a file`,
    risk: name === "read" ? "read" : "write",
    parameters: Type.Object({ path: Type.String() }),
    execute: () => ({ content: [{ type: "text", text: "ok" }] }),
  });

/** A policy that denies `.env` and records every call it was asked about. */
const asked: string[] = [];
const noSecrets = definePlugin({
  name: "no-secrets",
  setup(rein) {
    rein.hooks.toolGate.tap("no-secrets", (call) => {
      asked.push(call.name);
      return call.args.path === ".env" ? { decision: "deny", reason: "secret file" } : undefined;
    });
  },
});

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  asked.length = 0;
});

async function kit() {
  t = await createTestHarness({ plugins: [noSecrets], tools: [fileTool("read"), fileTool("write")] });
  return t;
}

describe("checkToolCall with a tool name the harness does not have", () => {
  it("a misspelt name rejects with unknown_tool and the closest registered name; the policy is never asked", async () => {
    const h = await kit();
    for (const probe of [
      () => checkToolCall(h, { name: "wrte", args: { path: ".env" } }),
      () => h.checkToolCall({ name: "wrte", args: { path: ".env" } }),
    ]) {
      await expect(probe()).rejects.toMatchObject({
        code: "unknown_tool",
        tool: "wrte",
        suggestion: "write",
      });
    }
    const caught = await checkToolCall(h, { name: "wrte" }).catch((error: unknown) => error);
    expect(isSdkError(caught, "unknown_tool")).toBe(true);
    expect((caught as Error).message).toContain('did you mean "write"?');
    expect((caught as Error).message).toContain("registered: read, write");
    expect(asked).toEqual([]);
  });

  it("a name in the wrong case is suggested in the right one", async () => {
    const h = await kit();
    await expect(h.checkToolCall({ name: "Write", args: { path: "a" } })).rejects.toMatchObject({
      code: "unknown_tool",
      suggestion: "write",
    });
  });

  it("a name close to nothing registered gets no suggestion, and still fails", async () => {
    const h = await kit();
    const caught = await h.checkToolCall({ name: "deploy_production" }).catch((error: unknown) => error);
    expect(caught).toMatchObject({ code: "unknown_tool", tool: "deploy_production" });
    expect((caught as { suggestion?: string }).suggestion).toBeUndefined();
    expect((caught as Error).message).not.toContain("did you mean");
  });

  it("a harness without tools says so", async () => {
    t = await createTestHarness();
    await expect(t.checkToolCall({ name: "read" })).rejects.toMatchObject({
      code: "unknown_tool",
      message: expect.stringContaining("registered: none"),
    });
  });

  it('unregistered: "refuse" opts in: denied by harness as a run would, before any gate', async () => {
    const h = await kit();
    const evaluation = await h.checkToolCall(
      { name: "wrte", args: { path: ".env" } },
      { unregistered: "refuse" },
    );
    expect(evaluation).toMatchObject({ decision: "deny", by: "harness", registered: false });
    expect(evaluation.reason).toContain('unknown tool "wrte"');
    expect(asked).toEqual([]);
  });

  it('unregistered: "evaluate" opts in: the gates decide on a stand-in', async () => {
    const h = await kit();
    const evaluation = await checkToolCall(
      h,
      { name: "upload", args: { path: ".env" }, risk: "network" },
      { unregistered: "evaluate" },
    );
    expect(evaluation).toMatchObject({ decision: "deny", by: "no-secrets", registered: false });
    expect(asked).toEqual(["upload"]);
  });

  it("a registered name is decided as before", async () => {
    const h = await kit();
    expect(await h.checkToolCall({ name: "write", args: { path: ".env" } })).toMatchObject({
      decision: "deny",
      by: "no-secrets",
      registered: true,
    });
  });

  it("evaluateToolCall on the main entry keeps deciding unregistered names on a stand-in (rein replay)", async () => {
    const h = await kit();
    expect(await evaluateToolCall(h, { name: "removed", args: { path: "a" } })).toMatchObject({
      decision: "allow",
      registered: false,
    });
  });
});
