import { describe, expect, expectTypeOf, it } from "vitest";
import { defineTool, type ToolExecutionContext, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const readFile = defineTool({
  name: "read_file",
  label: "Read file",
  description: "Read a file",
  risk: "read",
  parameters: Type.Object({ path: Type.String(), limit: Type.Optional(Type.Number()) }),
  execute(args, ctx) {
    expectTypeOf(args).toEqualTypeOf<{ path: string; limit?: number }>();
    expectTypeOf(ctx).toEqualTypeOf<ToolExecutionContext>();
    // @ts-expect-error `args` is typed from the schema: no `file` property.
    void args.file;
    ctx.update({ content: [{ type: "text", text: "reading" }] });
    return {
      content: [{ type: "text", text: `${args.path}:${args.limit ?? "all"}:${ctx.cwd}:${ctx.sessionId}` }],
    };
  },
});

describe("defineTool", () => {
  it("returns a frozen tool with the fields it was given", () => {
    expect(readFile).toMatchObject({ name: "read_file", label: "Read file", risk: "read" });
    expect(Object.isFrozen(readFile)).toBe(true);
  });

  it.each([
    ["a bad name", { name: "read file" }],
    ["a missing description", { description: "" }],
    ["parameters that are not an object schema", { parameters: Type.String() }],
    ["a missing execute", { execute: undefined }],
    ["an unknown risk", { risk: "dangerous" }],
    ["an unknown execution mode", { executionMode: "eventually" }],
  ])("rejects %s, naming the tool", (_what, override) => {
    const definition = {
      name: "tool_x",
      description: "d",
      parameters: Type.Object({}),
      execute: () => ({ content: [] }),
      ...override,
    };
    const expectedTool = "name" in override ? override.name : "tool_x";
    expect(() => defineTool(definition as never)).toThrow(
      expect.objectContaining({ code: "invalid_tool", tool: expectedTool }),
    );
  });

  it("runs with validated args, progress updates, cwd and session id", async () => {
    const t = await createTestHarness({
      tools: [readFile],
      config: { cwd: "/repo" },
      script: [{ toolCalls: [{ name: "read_file", args: { path: "a.ts", limit: "5" } }] }, "done"],
    });
    await t.prompt("read it");
    const end = t.eventsOf("tool_execution_end")[0];
    // "5" was coerced to 5 by validation before execute saw it.
    expect(end?.result.content).toEqual([{ type: "text", text: `a.ts:5:/repo:${t.session.id}` }]);
    expect(t.eventsOf("tool_execution_update")).toHaveLength(1);
    await t.dispose();
  });
});
