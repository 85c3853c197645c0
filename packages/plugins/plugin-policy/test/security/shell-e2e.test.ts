/**
 * End to end with a real bash: the model asks the bash tool of @rein/tools-shell to run
 * a command in which an allowed `echo` carries a `touch pwned` along. The policy allows
 * `echo *` and denies `touch *`; the marker file `pwned` proves whether the ridden-along
 * command ran. Each attack is first run in plain bash in another directory, to prove it
 * does create the marker when nothing stops it.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { policyHarness } from "./shell-rules.js";

const RIDE_ALONG = [
  "echo hi; touch pwned",
  "echo hi && $'\\x74ouch' pwned",
  "echo hi # comment\ntouch pwned",
  "echo hi \\\n; touch pwned",
  "echo <(touch pwned); sleep 0.2",
  "echo `echo \\`touch pwned\\``",
  "f() { touch pwned; }; f",
  "case a in a) touch pwned;; esac",
  "time touch pwned",
  ">out touch pwned",
  "X=$(touch pwned) echo hi",
  'echo hi; "touch" pwned',
  "echo hi; t''ouch pwned",
  "echo hi; \\touch pwned",
  "echo hi; bash -c 'touch pwned'",
  'echo hi; sh -c "touch pwned"',
  "echo hi; eval 'touch pwned'",
  "echo hi; env A=1 touch pwned",
  "echo hi; command touch pwned",
  "echo hi; nohup touch pwned 2>/dev/null",
  "echo hi; timeout 5 touch pwned",
  "echo hi; nice -n 1 touch pwned",
  "echo pwned | xargs touch",
  "echo hi; find . -maxdepth 0 -exec touch pwned \\;",
  "echo hi; /usr/bin/touch pwned",
  "echo hi; {touch,pwned}",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  "echo hi; touch${IFS}pwned",
  "T=touch; echo hi; $T pwned",
  "echo hi; bash <<< 'touch pwned'",
  "echo 'touch pwned' | bash",
];

const dirs: string[] = [];
function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "rein-policy-e2e-")));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("a ridden-along command never runs (real bash, security invariant 1)", () => {
  it.each(RIDE_ALONG)("%j: plain bash creates the marker, the agent does not", async (command) => {
    const control = tempDir();
    execFileSync("/bin/bash", ["-c", command], { cwd: control, stdio: "ignore", timeout: 10_000 });
    expect(existsSync(join(control, "pwned")), "the attack works in plain bash").toBe(true);

    const cwd = tempDir();
    const h = await policyHarness("touch", cwd, [
      { toolCalls: [{ name: "bash", args: { command } }] },
      "done",
    ]);
    try {
      await h.prompt("go");
      const [decision] = h.decisions();
      expect(decision?.decision).toBe("deny");
      // A denied call never starts: a decision and an error result, no execution events.
      expect(h.eventsOf("tool_execution_start")).toEqual([]);
      expect(existsSync(join(cwd, "pwned")), "the ridden-along command did not run").toBe(false);
    } finally {
      await h.dispose();
    }
  });

  it("an allowed command runs for real, on the facts the bash tool's inspect gave", async () => {
    const cwd = tempDir();
    const command = "echo allowed-$((6*7)) && git status >/dev/null 2>&1 || echo no-repo";
    const h = await policyHarness("touch", cwd, [
      { toolCalls: [{ name: "bash", args: { command } }] },
      "done",
    ]);
    try {
      await h.prompt("go");
      expect(h.decisions()[0]).toMatchObject({ decision: "allow", by: "policy:rules[0]" });
      const [end] = h.eventsOf("tool_execution_end");
      const text = JSON.stringify(end?.result.content);
      expect(text).toContain("allowed-42");
      expect(text).toContain("no-repo");
    } finally {
      await h.dispose();
    }
  });
});
