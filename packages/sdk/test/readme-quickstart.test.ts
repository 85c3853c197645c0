/** The README's "first policy plugin", as written there (imports pointed at the source). */
import { expect, it } from "vitest";
import { definePlugin, defineTool, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const noEnv = definePlugin({
  name: "no-env",
  options: Type.Object({ patterns: Type.Array(Type.String(), { default: ["\\.env$"] }) }),
  setup(rein, options) {
    const patterns = options.patterns.map((p) => new RegExp(p));
    rein.hooks.toolGate.tap("no-env", (call) => {
      const path = call.args.path;
      if (typeof path === "string" && patterns.some((p) => p.test(path))) {
        return { decision: "deny", rule: "env-file", reason: `${path} may hold secrets` };
      }
      return undefined;
    });
  },
});

const read = defineTool({
  name: "read",
  description: "Read a file",
  risk: "read",
  parameters: Type.Object({ path: Type.String() }),
  execute: (args) => ({ content: [{ type: "text", text: `contents of ${args.path}` }] }),
});

it("the README's first plugin denies .env files and says who decided", async () => {
  const t = await createTestHarness({ plugins: [noEnv], tools: [read] });
  expect(await t.checkToolCall({ name: "read", args: { path: ".env" } })).toMatchObject({
    decision: "deny",
    by: "no-env:env-file",
  });
  expect((await t.checkToolCall({ name: "read", args: { path: "a.ts" } })).decision).toBe("allow");
  await t.dispose();
});
