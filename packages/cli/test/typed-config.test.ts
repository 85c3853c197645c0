/**
 * `rein.config.ts` is checked by the editor: `plugin(imported, options)` types a
 * plugin's options from its own schema, so a wrong option type is a compile
 * error (checked here with the TypeScript compiler, as an editor would).
 */
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { typecheckSnippets } from "./support/doc-snippets.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

const config = (
  policyOptions: string,
  permissionsOptions: string,
) => `import permissions from "@rein/plugin-permissions";
import policy from "@rein/plugin-policy";
import { defineConfig, plugin } from "@rein/sdk";

export default defineConfig({
  model: { script: ["hello"] },
  plugins: [
    "@rein/tools-fs",
    plugin(policy, ${policyOptions}),
    plugin(permissions, ${permissionsOptions}),
  ],
});`;

/** Each config, told apart by the `line` its snippet claims. */
const cases: [what: string, code: string][] = [
  [
    "well-typed options",
    config(
      '{ rules: [{ rule: "bash(git push *)", decision: "ask", reason: "publishes commits" }] }',
      '{ mode: "acceptEdits", defaults: { network: "deny" } }',
    ),
  ],
  [
    "a decision that is not allow, ask or deny",
    config('{ rules: [{ rule: "bash(rm *)", decision: "maybe" }] }', "{}"),
  ],
  ["a rule that is not a string", config('{ rules: [{ rule: 42, decision: "deny" }] }', "{}")],
  ["an option the plugin does not declare", config("{ rulez: [] }", "{}")],
  ["a permission mode that does not exist", config("{}", '{ mode: "yolo" }')],
];

describe("typed plugin options in rein.config.ts", { timeout: 180_000 }, () => {
  it("compile when well-typed; a wrong option type is a compile error", () => {
    const snippets = cases.map(([, code], i) => ({
      doc: "packages/cli/README.md",
      line: i * 100,
      info: `file=config-${i}.ts`,
      file: `config-${i}.ts`,
      code,
    }));
    const problems = typecheckSnippets(root, snippets, ".cache/rein-typed-config");
    const failing = new Set(problems.map((p) => Math.floor(p.line / 100)));
    expect(
      cases.map(([what], i) => [what, failing.has(i)]),
      problems.map((p) => p.message).join("\n"),
    ).toEqual([
      ["well-typed options", false],
      ["a decision that is not allow, ask or deny", true],
      ["a rule that is not a string", true],
      ["an option the plugin does not declare", true],
      ["a permission mode that does not exist", true],
    ]);
  });
});
