import { describe, expect, it } from "vitest";
import { defineTool, type ToolResult, Type } from "../src/index.js";
import { toolContext } from "../src/testing/index.js";

const slow = defineTool({
  name: "slow",
  description: "reports progress, stops on abort",
  parameters: Type.Object({}),
  execute: (_args, ctx) =>
    new Promise<ToolResult>((resolve) => {
      ctx.update({ content: [{ type: "text", text: `started in ${ctx.cwd}` }] });
      ctx.signal.addEventListener("abort", () =>
        resolve({ content: [{ type: "text", text: "stopped" }], isError: true }),
      );
    }),
});

describe("toolContext gives a tool every field a run gives it", () => {
  it("has cwd, ids, frozen facts and records updates; abort() aborts its signal", async () => {
    const ctx = toolContext({ cwd: "/project", facts: { sandbox: undefined } as never });
    expect(ctx).toMatchObject({ cwd: "/project", sessionId: "test-session", toolCallId: "test-call" });
    expect(Object.isFrozen(ctx.facts)).toBe(true);
    const running = slow.execute({}, ctx);
    ctx.abort();
    expect(await running).toMatchObject({ isError: true, content: [{ text: "stopped" }] });
    expect(ctx.updates).toEqual([{ content: [{ type: "text", text: "started in /project" }] }]);
  });

  it("deep-freezes a copy of the facts it was given", () => {
    const facts = { nested: { list: [1] } };
    const ctx = toolContext({ facts: facts as never });
    expect(Object.isFrozen((ctx.facts as unknown as typeof facts).nested.list)).toBe(true);
    expect(Object.isFrozen(facts)).toBe(false);
    expect(toolContext().cwd).toBe(process.cwd());
  });
});
