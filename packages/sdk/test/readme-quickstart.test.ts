/** The README's "first policy plugin", as written there (imports pointed at the source). */
import { expect, it } from "vitest";
import { definePlugin, defineTool, Type } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

const noEnv = definePlugin({
  name: "no-env",
  options: Type.Object({ names: Type.Array(Type.String(), { default: [".env"] }) }),
  setup(rein, options) {
    rein.hooks.toolGate.tap("no-env", (call) => {
      // Canonical paths the SDK resolved once (`..` collapsed, symlinks followed):
      // never match the raw argument, the model can spell a path many ways.
      for (const path of call.facts.paths ?? []) {
        const name = path.relative.split("/").at(-1) ?? "";
        if (options.names.includes(name)) {
          return {
            decision: "deny",
            rule: "env-file",
            reason: `${path.input} (${path.relative}) may hold secrets`,
          };
        }
      }
      return undefined; // no opinion: other gates, then the default verdict, decide
    });
  },
});

const read = defineTool({
  name: "read",
  description: "Read a file",
  risk: "read",
  parameters: Type.Object({ path: Type.String() }),
  paths: { path: "file" }, // resolved once into call.facts.paths
  execute: (args) => ({ content: [{ type: "text", text: `contents of ${args.path}` }] }),
});

it("the README's first plugin denies .env files however they are spelled, and says who decided", async () => {
  const t = await createTestHarness({ plugins: [noEnv], tools: [read] });
  for (const path of [".env", "src/../.env"]) {
    expect(await t.checkToolCall({ name: "read", args: { path } })).toMatchObject({
      decision: "deny",
      by: "no-env:env-file",
    });
  }
  expect((await t.checkToolCall({ name: "read", args: { path: "a.ts" } })).decision).toBe("allow");
  await t.dispose();
});
