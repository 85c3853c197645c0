import { defineTool, SdkError, Type } from "@rein/sdk";
import { checkToolCall, createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import policy, { boundaryOf, type PolicyRule } from "../src/index.js";

type Mode = "off" | "workspace-write" | "read-only" | undefined;

/** A bash tool whose facts say which boundary it runs in, as @rein/tools-shell's do. */
const bashIn = (mode: Mode) =>
  defineTool({
    name: "bash",
    description: "Run a shell command",
    risk: "exec",
    parameters: Type.Object({
      command: Type.String(),
      dangerouslyDisableSandbox: Type.Optional(Type.Boolean()),
    }),
    ...(mode === undefined
      ? {}
      : {
          inspect: (args: { dangerouslyDisableSandbox?: boolean }) => ({
            sandbox: { mode, unsandboxedRequested: args.dangerouslyDisableSandbox === true },
          }),
        }),
    execute: () => ({ content: [{ type: "text", text: "ran" }] }),
  });

const RULES: PolicyRule[] = [
  { id: "make-sandboxed", rule: "bash(make *)", decision: "allow", when: { sandbox: "workspace-write" } },
  { id: "make-bare", rule: "bash(make *)", decision: "ask", when: { sandbox: "off" } },
  { id: "any-sandbox", rule: "bash(ls *)", decision: "allow", when: { sandbox: ["sandboxed"] } },
];

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

async function verdict(mode: Mode, args: Record<string, unknown>) {
  t = await createTestHarness({ plugins: [[bashIn(mode)], [policy, { rules: RULES }]] });
  const result = await checkToolCall(t, { name: "bash", args }, { skipPermission: true });
  await t.dispose();
  t = undefined;
  return result;
}

describe("policy: rules that depend on the sandbox boundary", () => {
  const cases: { name: string; mode: Mode; args: Record<string, unknown>; expected: object }[] = [
    {
      name: "allowed inside workspace-write",
      mode: "workspace-write",
      args: { command: "make test" },
      expected: { decision: "allow", by: "policy:make-sandboxed" },
    },
    {
      name: "asked when the tool runs unsandboxed",
      mode: "off",
      args: { command: "make test" },
      expected: { decision: "ask", by: "policy:make-bare" },
    },
    {
      name: "asked when the call asks to leave the sandbox",
      mode: "workspace-write",
      args: { command: "make test", dangerouslyDisableSandbox: true },
      expected: { decision: "ask", by: "policy:make-bare" },
    },
    {
      name: "asked when the tool says nothing about a sandbox",
      mode: undefined,
      args: { command: "make test" },
      expected: { decision: "ask", by: "policy:make-bare" },
    },
    {
      name: "'sandboxed' covers read-only",
      mode: "read-only",
      args: { command: "ls -la" },
      expected: { decision: "allow", by: "policy:any-sandbox" },
    },
    {
      name: "a condition for another mode does not apply",
      mode: "read-only",
      args: { command: "make test" },
      expected: { decision: "allow", by: "harness:default" },
    },
  ];
  it.each(cases)("$name", async ({ mode, args, expected }) => {
    expect(await verdict(mode, args)).toMatchObject(expected);
  });

  it("reads the boundary fail-closed from the facts", () => {
    expect(boundaryOf(undefined)).toBe("off");
    expect(boundaryOf({ sandbox: { mode: "workspace-write" } })).toBe("off");
    expect(boundaryOf({ sandbox: { mode: "bogus", unsandboxedRequested: false } })).toBe("off");
    expect(boundaryOf({ sandbox: { mode: "read-only", unsandboxedRequested: false } })).toBe("read-only");
  });

  it("rejects an unknown boundary at load", async () => {
    await expect(
      createTestHarness({
        plugins: [[policy, { rules: [{ rule: "bash", decision: "allow", when: { sandbox: "container" } }] }]],
      }),
    ).rejects.toBeInstanceOf(SdkError);
  });
});
