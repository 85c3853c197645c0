// biome-ignore-all lint/suspicious/noTemplateCurlyInString: bash text, not templates
/**
 * End to end with a real bash: the model asks the bash tool of @rein/tools-shell to run
 * a command in which an allowed `echo` carries a `touch pwned` along. The policy allows
 * `echo *` and denies `touch *`; the marker file `pwned` proves whether the ridden-along
 * command ran. Each attack is first run in plain bash in another directory, to prove it
 * does create the marker when nothing stops it.
 */
import { execFileSync, spawnSync } from "node:child_process";
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
  "echo hi; touch${IFS}pwned",
  "T=touch; echo hi; $T pwned",
  "echo hi; bash <<< 'touch pwned'",
  "echo 'touch pwned' | bash",
];

/**
 * Issue 28, gap 1: bash evaluates text the grammar sees as data (a loop word, a
 * variable's value used as arithmetic or as a name, a here-doc that ends later than
 * the grammar thinks, a named coproc). Each is `unknown`, so `bash(echo *)` allows
 * none of them and the hidden `touch pwned` never runs.
 */
export const EVALUATED: string[] = [
  "for x in 'a[$(touch pwned)]'; do ((x)); echo ok; done",
  "for x in $(touch pwned); do echo ok; done",
  "x='a[$(touch pwned)]'; echo $((x))",
  "x='a[$(touch pwned)]'; echo $[x]",
  "x='a[$(touch pwned)]'; y=abc; echo ${y:x}",
  "x='a[$(touch pwned)]'; a=(1); echo ${a[@]:x}",
  "x='a[$(touch pwned)]'; echo ${a[x]}",
  "x='a[$(touch pwned)]'; [[ -v $x ]]",
  "x='a[$(touch pwned)]'; test -v \"$x\"",
  "x='a[$(touch pwned)]'; [[ $x -eq 1 ]]",
  "x='a[$(touch pwned)]'; declare -n r=$x; echo $r",
  "declare -i y; x='a[$(touch pwned)]'; y=x",
  "x='a[$(touch pwned)]'; let x",
  "x='a[$(touch pwned)]'; printf -v \"$x\" %s 1",
  "x='a[$(touch pwned)]'; read \"$x\" <<< 1",
  "x='a[$(touch pwned)]'; echo \"${!x}\"",
  "x='$(touch pwned)'; echo \"${x@P}\"",
  "x='a[$(touch pwned)]'; for ((i=x; i<0; i++)); do echo; done",
  "echo hi <<EOF\nEOF && echo '$(touch pwned)'",
  "coproc c { touch pwned; }; sleep 0.2",
  "echo hi; time { touch pwned; }",
  // Found by the differential oracle: inside double quotes these single quotes are plain text.
  "echo \"${x:-'$(touch pwned)'}\"",
  "x='a[$(touch pwned)]'; echo \"${y:-$((x))}\"",
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

  it.each(EVALUATED)(
    "%j: bash(echo *) does not allow it, and the hidden command never runs",
    async (command) => {
      const control = tempDir();
      // Some of these exit non-zero after the hidden command ran: only the marker matters.
      spawnSync("/bin/bash", ["-c", command], { cwd: control, stdio: "ignore", timeout: 10_000 });
      expect(existsSync(join(control, "pwned")), "the attack works in plain bash").toBe(true);

      for (const rules of ["echoOnly", "touch"] as const) {
        const cwd = tempDir();
        const h = await policyHarness(rules, cwd, [
          { toolCalls: [{ name: "bash", args: { command } }] },
          "done",
        ]);
        try {
          await h.prompt("go");
          const [decision] = h.decisions();
          expect(decision?.decision, `${rules}: ${decision?.reason}`).toBe("deny");
          expect(h.eventsOf("tool_execution_start")).toEqual([]);
          expect(existsSync(join(cwd, "pwned")), "the hidden command did not run").toBe(false);
        } finally {
          await h.dispose();
        }
      }
    },
  );

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
