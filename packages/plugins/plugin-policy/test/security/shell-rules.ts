/**
 * Rule sets and harness set-up shared by the shell security tables.
 *
 * Every harness has the real bash tool of @rein/tools-shell (so its `inspect` runs and
 * the policy decides on `call.facts.command`), the policy plugin, and a default verdict
 * of deny: "allow" in a table means the policy itself allowed the call.
 */

import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { createBashTool } from "@rein/tools-shell";
import policy, { type PolicyRule } from "../../src/index.js";

export const RULES = {
  /** The ride-along case: echo is fine, removing is not. */
  echo: [
    { rule: "bash(echo *)", decision: "allow", reason: "printing is harmless" },
    { id: "no-rm", rule: "bash(rm *)", decision: "deny", reason: "no deleting" },
  ],
  /** Only an allow rule: what it covers runs, anything else falls to the default. */
  echoOnly: [{ rule: "bash(echo *)", decision: "allow", reason: "printing is harmless" }],
  npm: [{ rule: "bash(npm run test *)", decision: "allow", reason: "tests are fine" }],
  /** A rule that names the redirection it allows. */
  log: [{ rule: "bash(echo * > *.log)", decision: "allow", reason: "logs are fine" }],
  push: [
    { rule: "bash(git status)", decision: "allow", reason: "read-only git" },
    { id: "no-push", rule: "bash(git push *)", decision: "deny", reason: "pushing publishes commits" },
  ],
  touch: [
    { rule: "bash(echo *)", decision: "allow", reason: "printing is harmless" },
    { rule: "bash(git status)", decision: "allow", reason: "read-only git" },
    { rule: "bash(ls *)", decision: "allow", reason: "listing" },
    { id: "no-touch", rule: "bash(touch *)", decision: "deny", reason: "no new files" },
    { id: "no-rm", rule: "bash(rm *)", decision: "deny", reason: "no deleting" },
    { id: "no-push", rule: "bash(git push *)", decision: "deny", reason: "no pushing" },
  ],
  /** Harmless-looking builtins allowed next to `git status`: what they set must still be named (session 10's red team). */
  builtins: [
    { rule: "bash(git status *)", decision: "allow", reason: "read-only git" },
    { rule: "bash(line=* read *)", decision: "allow", reason: "reading into line" },
    ...[
      "echo",
      "printf",
      "mapfile",
      "readarray",
      "getopts",
      "wait",
      "unset",
      "local",
      "xargs",
      "enable",
      "exec",
      "bash",
    ].map((name) => ({ rule: `bash(${name} *)`, decision: "allow" as const, reason: "harmless on its own" })),
    { rule: "bash(f)", decision: "allow", reason: "the function" },
    { id: "no-rm", rule: "bash(rm *)", decision: "deny", reason: "no deleting" },
  ],
} satisfies Record<string, PolicyRule[]>;

export type RuleSet = keyof typeof RULES;

/** A harness with the bash tool running in `cwd`, the policy with `rules`, and a default deny. */
export async function policyHarness(
  rules: RuleSet,
  cwd: string,
  script: TestHarness["script"] extends (...s: infer S) => void ? S : never = [],
): Promise<TestHarness> {
  const h = await createTestHarness({
    plugins: [[policy, { rules: RULES[rules] }]],
    tools: [createBashTool({ timeout: 20 })],
    script,
    config: { cwd },
  });
  h.harness.setDefaultToolVerdict("deny");
  return h;
}
