/**
 * Security invariant 1, one row per attack class of issue 13: each command, the rule
 * set it meets, and the verdict it must get. "deny" by `harness:default` means the
 * policy did not allow it (the test harness denies what nobody allowed); "ask" is
 * reported as is (`skipPermission`), and with no one to answer it is a deny.
 */
import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import type { TestHarness } from "@rein/sdk/testing";
import { afterAll, describe, expect, it } from "vitest";
import { policyHarness, type RuleSet } from "./shell-rules.js";

type Row = [klass: string, command: string, rules: RuleSet, decision: "allow" | "ask" | "deny", by: string];

const DENY_RM = "policy:no-rm";
const DEFAULT = "harness:default";

export const ATTACKS: Row[] = [
  ["ANSI-C quoting", "$'\\x72m' -rf x", "echo", "deny", DENY_RM],
  ["ANSI-C quoting", "echo hi; $'\\162m' -rf x", "echo", "deny", DENY_RM],
  ["ANSI-C quoting", "git $'\\x70ush' origin", "push", "deny", "policy:no-push"],
  ["comment swallowing a newline", "echo hi # a comment\nrm -rf x", "echo", "deny", DENY_RM],
  ["comment swallowing a newline", "echo hi # c\ngit push", "echoOnly", "deny", DEFAULT],
  ["backslash-newline", "echo hi \\\n; rm -rf x", "echo", "deny", DENY_RM],
  ["backslash-newline", "r\\\nm -rf x", "echo", "deny", DENY_RM],
  ["backslash-newline", "git pu\\\nsh", "push", "deny", "policy:no-push"],
  ["process substitution", "echo <(rm -rf x)", "echo", "deny", DENY_RM],
  ["process substitution", "echo hi > >(rm x)", "echo", "deny", DENY_RM],
  ["process substitution", "cat <(echo hi)", "echo", "ask", DENY_RM],
  ["process substitution", "echo <(echo hi)", "echoOnly", "deny", DEFAULT],
  ["nested backticks", "echo `echo \\`rm -rf x\\``", "echo", "deny", DENY_RM],
  ["nested backticks", "echo `echo \\`git push\\``", "push", "deny", "policy:no-push"],
  ["function body", "f() { rm -rf x; }; f", "echo", "deny", DENY_RM],
  ["function body", "function g { git push; }; g", "push", "deny", "policy:no-push"],
  ["case arm", "case a in a) rm -rf x;; esac", "echo", "deny", DENY_RM],
  ["case arm", "case $1 in *) echo hi; rm x;; esac", "echo", "deny", DENY_RM],
  ["loop body", "for i in 1 2; do rm -rf $i; done", "echo", "deny", DENY_RM],
  ["loop body", "while true; do git push; break; done", "push", "deny", "policy:no-push"],
  ["if branch", "if true; then echo hi; else rm -rf x; fi", "echo", "deny", DENY_RM],
  ["time", "time rm -rf x", "echo", "deny", DENY_RM],
  ["time", "time -p git push", "push", "deny", "policy:no-push"],
  ["leading redirection", ">out rm -rf x", "echo", "deny", DENY_RM],
  ["leading redirection", "2>/dev/null git push", "push", "deny", "policy:no-push"],
  ["assignment with substitution", "X=$(rm -rf x) echo hi", "echo", "deny", DENY_RM],
  ["assignment with substitution", "X=`rm -rf x`", "echo", "deny", DENY_RM],
  ["assignment with escapes", "X=a\\ b rm -rf x", "echo", "deny", DENY_RM],
  ["assignment changing what runs", "PATH=/tmp echo hi", "echoOnly", "deny", DEFAULT],
  ["assignment changing what runs", "LD_PRELOAD=/tmp/x.so echo hi", "echoOnly", "deny", DEFAULT],
  ["assignment changing what runs", "BASH_ENV=/tmp/x echo hi", "echoOnly", "deny", DEFAULT],
  [
    "assignment changing what runs",
    "export NODE_OPTIONS=--require=/tmp/x; echo hi",
    "echoOnly",
    "deny",
    DEFAULT,
  ],
  ["assignment changing what runs", "PATH=/tmp; git status", "push", "deny", DEFAULT],
  ["redirection changing what runs", "git status > .git/hooks/pre-commit", "push", "deny", DEFAULT],
  ["redirection changing what runs", "echo 'rm -rf ~' >> ~/.bashrc", "echoOnly", "deny", DEFAULT],
  ["redirection changing what runs", "echo hi &>notes", "echoOnly", "deny", DEFAULT],
  ["redirection changing what runs", "echo x > a.log; echo y > .bashrc", "log", "deny", DEFAULT],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  ["substitution the grammar misses", "ls ${x-`rm -rf y`}", "echo", "ask", DENY_RM],
  ["blank the grammar misreads", "echo hi\n\\rm -rf x", "echo", "ask", DENY_RM],
  ["quoting", '"git" push', "push", "deny", "policy:no-push"],
  ["quoting", "g''it push", "push", "deny", "policy:no-push"],
  ["quoting", "\\git push", "push", "deny", "policy:no-push"],
  ["quoting", "git pu\\sh", "push", "deny", "policy:no-push"],
  ["quoting", 'g"i"t "pu"sh', "push", "deny", "policy:no-push"],
  ["quoting", "'rm' -rf x", "echo", "deny", DENY_RM],
  ["wrapper bash -c", "bash -c 'rm -rf x'", "echo", "deny", DENY_RM],
  ["wrapper bash -c", "bash -lc 'echo hi; rm x'", "echo", "deny", DENY_RM],
  ["wrapper sh -c", 'sh -c "git push"', "push", "deny", "policy:no-push"],
  ["wrapper sh -c", "echo hi && sh -c \"sh -c 'rm x'\"", "echo", "deny", DENY_RM],
  ["wrapper eval", "eval 'rm -rf x'", "echo", "deny", DENY_RM],
  ["wrapper eval", 'eval "$CMD"', "echo", "ask", DENY_RM],
  ["wrapper env", "env rm -rf x", "echo", "deny", DENY_RM],
  ["wrapper env", "env -i A=1 rm x", "echo", "deny", DENY_RM],
  ["wrapper env", "env -S 'rm x'", "echo", "ask", DENY_RM],
  ["wrapper command", "command rm -rf x", "echo", "deny", DENY_RM],
  ["wrapper exec", "exec rm -rf x", "echo", "deny", DENY_RM],
  ["wrapper nohup", "nohup git push &", "push", "deny", "policy:no-push"],
  ["wrapper sudo", "sudo rm -rf x", "echo", "deny", DENY_RM],
  ["wrapper sudo", "sudo -u root -E rm x", "echo", "deny", DENY_RM],
  ["wrapper sudo", "sudo echo hi", "echoOnly", "deny", DEFAULT],
  ["wrapper timeout", "timeout -s KILL 5 rm x", "echo", "deny", DENY_RM],
  ["wrapper nice", "nice -n 5 rm x", "echo", "deny", DENY_RM],
  ["wrapper stdbuf", "stdbuf -o0 rm x", "echo", "deny", DENY_RM],
  ["wrapper xargs", "echo x | xargs rm", "echo", "deny", DENY_RM],
  ["wrapper xargs", "echo x | xargs -n1 echo", "echoOnly", "deny", DEFAULT],
  ["wrapper find -exec", "find . -exec rm {} \\;", "echo", "deny", DENY_RM],
  ["wrapper find -exec", "find . -execdir sh -c 'git push' \\;", "push", "deny", "policy:no-push"],
  ["wrapper busybox", "busybox sh -c 'rm x'", "echo", "deny", DENY_RM],
  ["wrapper setsid", "setsid -f rm -rf x", "echo", "deny", DENY_RM],
  ["package runner", "pnpm exec rm -rf x", "echo", "deny", DENY_RM],
  ["package runner", "npm exec -- git push", "push", "deny", "policy:no-push"],
  ["package runner", "uv run echo hi", "echoOnly", "deny", DEFAULT],
  ["runner not unwrapped", "watch -n1 rm x", "echo", "ask", DENY_RM],
  ["runner not unwrapped", "ssh host git push", "push", "ask", "policy:no-push"],
  ["runner not unwrapped", "cross-env A=1 rm x", "echo", "ask", DENY_RM],
  ["absolute path", "/usr/bin/git push", "push", "deny", "policy:no-push"],
  ["absolute path", "/bin/rm -rf x", "echo", "deny", DENY_RM],
  ["absolute path", "./echo hi", "echoOnly", "deny", DEFAULT],
  ["git global options", "git -C /tmp push", "push", "deny", "policy:no-push"],
  ["git global options", "git -c core.pager=x --no-pager push origin", "push", "deny", "policy:no-push"],
  ["git global options", "git --git-dir=.git --work-tree=. push", "push", "deny", "policy:no-push"],
  ["brace expansion", "{rm,-rf,x}", "echo", "ask", DENY_RM],
  ["brace expansion", "git {push,origin}", "push", "ask", "policy:no-push"],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  ["${IFS}", "rm${IFS}-rf${IFS}x", "echo", "ask", DENY_RM],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  ["${IFS}", "echo hi;git${IFS}push", "push", "ask", "policy:no-push"],
  ["variable in command position", "$X -rf x", "echo", "ask", DENY_RM],
  ["variable in command position", "$(echo rm) -rf x", "echo", "ask", DENY_RM],
  ["variable in command position", "T=git; $T push", "push", "ask", "policy:no-push"],
  ["here-doc feeding a shell", "bash <<EOF\nrm -rf x\nEOF", "echo", "ask", DENY_RM],
  ["here-string feeding a shell", "bash <<< 'rm x'", "echo", "ask", DENY_RM],
  ["pipe feeding a shell", "echo 'rm x' | sh", "echo", "ask", DENY_RM],
  ["pipe feeding an interpreter", "echo 'import os' | python3", "echo", "ask", DENY_RM],
  ["source", "source ./x.sh", "echo", "ask", DENY_RM],
  ["source", ". ./x.sh", "echo", "ask", DENY_RM],
  ["substitution in a here-doc", "cat <<EOF\n$(rm -rf x)\nEOF", "echo", "deny", DENY_RM],
  ["substitution in a here-doc", "cat <<-EOF\n\t$(rm -rf x)\n\tEOF", "echo", "ask", DENY_RM],
  ["arithmetic running a value", "x='a[$(rm -rf y)]'; echo $((x))", "echo", "ask", DENY_RM],
  ["trap", "trap 'rm -rf x' EXIT", "echo", "deny", DENY_RM],
  ["array subscript evaluated later", "printf -v 'a[$(rm -rf y)]' x", "echo", "ask", DENY_RM],
  ["array subscript evaluated later", "declare 'a[$(rm -rf y)]=1'", "echo", "ask", DENY_RM],
  ["array subscript evaluated later", "[[ -v 'a[$(rm -rf y)]' ]]", "echo", "ask", DENY_RM],
  ["callback string", "mapfile -C 'rm -rf y' -c 1 < /etc/hostname", "echo", "ask", DENY_RM],
  ["syntax error", "echo hi; rm (", "echo", "deny", DENY_RM],
  ["syntax error", "echo $(", "echo", "ask", DENY_RM],
  // Issue 28, gap 1: text bash evaluates as arithmetic or as a name, loops, misparses.
  [
    "loop word run as arithmetic",
    "for x in 'a[$(rm -rf y)]'; do ((x)); echo ok; done",
    "echo",
    "ask",
    DENY_RM,
  ],
  [
    "loop word run as arithmetic",
    "for x in 'a[$(rm -rf y)]'; do ((x)); echo ok; done",
    "echoOnly",
    "deny",
    DEFAULT,
  ],
  ["loop word substitution", "for x in $(rm -rf y); do echo ok; done", "echo", "deny", DENY_RM],
  ["loop variable as assignment", "for HOME in /tmp; do git status; done", "push", "deny", DEFAULT],
  ["loop variable as assignment", "for PATH in /tmp/evil; do git status; done", "push", "deny", DEFAULT],
  ["loop variable as assignment", "for x in a b; do echo $x; done", "echoOnly", "deny", DEFAULT],
  ["old-style arithmetic", "x='a[$(rm -rf y)]'; echo $[x]", "echo", "ask", DENY_RM],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  ["substring offset", "x='a[$(rm -rf y)]'; echo ${HOME:x}", "echo", "ask", DENY_RM],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  ["subscript", "x='a[$(rm -rf y)]'; echo ${a[x]}", "echo", "ask", DENY_RM],
  ["-v test", "x='a[$(rm -rf y)]'; [[ -v $x ]] && echo set", "echo", "ask", DENY_RM],
  ["-v test", "x='a[$(rm -rf y)]'; test -v \"$x\"", "echo", "ask", DENY_RM],
  ["arithmetic test", "x='a[$(rm -rf y)]'; [[ $x -eq 1 ]]", "echo", "ask", DENY_RM],
  ["name reference", "x='a[$(rm -rf y)]'; declare -n r=$x; echo $r", "echo", "ask", DENY_RM],
  ["declare -i", "declare -i n; x='a[$(rm -rf y)]'; n=x", "echo", "ask", DENY_RM],
  ["let", "x='a[$(rm -rf y)]'; let x", "echo", "ask", DENY_RM],
  ["read target", "x='a[$(rm -rf y)]'; read \"$x\" <<< 1", "echo", "ask", DENY_RM],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  ["indirect expansion", "x='a[$(rm -rf y)]'; echo \"${!x}\"", "echo", "ask", DENY_RM],
  ["c-style for", "x='a[$(rm -rf y)]'; for ((i=x; i<0; i++)); do echo; done", "echo", "ask", DENY_RM],
  ["set -x prompt", "PS4='$(rm -rf y)'; set -x; echo hi", "echo", "ask", DENY_RM],
  ["completion word list", "compgen -W '$(rm -rf y)' a", "echo", "ask", DENY_RM],
  ["named coproc (misparsed)", "coproc c { rm -rf x; }", "echo", "ask", DENY_RM],
  ["named coproc (misparsed)", "coproc c { git push; }", "push", "ask", "policy:no-push"],
  ["time of a group (misparsed)", "time { rm -rf x; }", "echo", "ask", DENY_RM],
  ["here-doc ending later than parsed", "echo hi <<EOF\nEOF && echo '$(rm -rf y)'", "echo", "ask", DENY_RM],
  ["here-doc body arithmetic", "x='a[$(rm -rf y)]'; cat <<EOF\n$((x))\nEOF", "echo", "ask", DENY_RM],
  ["words after a redirection target", "echo 2>/dev/null hi $x", "echoOnly", "deny", DEFAULT],
  // Session 10's red team: each judged in real bash by packages/sdk/test/security/shell-red-team.test.ts.
  ["printf -v sets a variable", "printf -v PATH %s ./evil; git status", "builtins", "deny", DEFAULT],
  ["read sets a variable", "read -r PATH <<< ./evil; git status", "builtins", "deny", DEFAULT],
  ["mapfile sets a variable", "mapfile -t PATH <<< ./evil; git status", "builtins", "deny", DEFAULT],
  ["getopts sets a variable", "getopts a PATH -a; git status", "builtins", "deny", DEFAULT],
  ["unset PATH searches the folder", "unset PATH; git status", "builtins", "deny", DEFAULT],
  ["local PATH is unset", "f() { local PATH; git status; }; f", "builtins", "deny", DEFAULT],
  ["{NAME}> redirection", "echo hi {PATH}>/dev/null; git status", "builtins", "ask", DENY_RM],
  ["{NAME}> redirection", "exec {PATH}</dev/null; git status", "builtins", "ask", DENY_RM],
  ["xargs environment", "echo | xargs --process-slot-var=PATH git status", "builtins", "ask", DENY_RM],
  ["interactive shell startup file", "bash --rcfile ./evil.sh -ic 'git status'", "builtins", "ask", DENY_RM],
  ["interactive shell startup file", "bash -i -c 'git status'", "builtins", "ask", DENY_RM],
  ["interactive shell startup file", "bash -i -c 'rm -rf x'", "echo", "deny", DENY_RM],
  ["enable loads a shared object", "enable ev; git status", "builtins", "ask", DENY_RM],
  ["env -C runs elsewhere", "env -C /tmp/other git status", "builtins", "deny", DEFAULT],
  ["a NUL ends $'...'", "$'rm\\0x' -rf y", "echo", "deny", DENY_RM],
  ["a NUL ends $'...'", "git $'push\\x00' origin", "push", "deny", "policy:no-push"],
  ["hash table as a variable", "BASH_CMDS[0]=/bin/rm; 0 -rf x", "echo", "ask", DENY_RM],
  ["hash table as a variable", "printf -v BASH_CMDS %s /bin/rm; 0 -rf x", "builtins", "ask", DENY_RM],
  [
    "exported function through env",
    "env 'BASH_FUNC_git%%=() { rm -rf x; }' bash -c 'git status'",
    "echo",
    "ask",
    DENY_RM,
  ],
  ["translated string", 'git $"push" origin', "push", "deny", "policy:no-push"],
  ["translated string", 'git pu$"sh"', "push", "deny", "policy:no-push"],
];

/** What allow rules must still allow. */
export const ALLOWED: Row[] = [
  ["allow", "npm run test -- -u", "npm", "allow", "policy:rules[0]"],
  ["allow", "npm run test", "npm", "allow", "policy:rules[0]"],
  ["allow", "echo hi", "echo", "allow", "policy:rules[0]"],
  ["allow", 'echo "a; rm -rf x"', "echo", "allow", "policy:rules[0]"],
  ["allow", "echo hi > /dev/null 2>&1", "echo", "allow", "policy:rules[0]"],
  ["allow", "echo hi >&2", "echo", "allow", "policy:rules[0]"],
  ["allow", "echo hi > out.log 2>&1", "log", "allow", "policy:rules[0]"],
  ["allow", "echo hi && git status", "touch", "allow", "policy:rules[0]"],
  ["allow", "echo $(git status)", "touch", "allow", "policy:rules[0]"],
  ["allow", "ls *.ts | echo", "touch", "allow", "policy:rules[2]"],
  ["allow", "echo $((6*7)) $[1+1]", "echo", "allow", "policy:rules[0]"],
  // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
  ["allow", 'echo "${HOME:-/} ${#HOME} ${HOME:1:2} ${HOME##*/}"', "echo", "allow", "policy:rules[0]"],
  ["allow", "printf %s hi; git status; enable -p", "builtins", "allow", "policy:rules[3]"],
  ["allow", "read -r line < notes.txt && echo $line", "builtins", "allow", "policy:rules[1]"],
  ["not allowed", "echo hi; rm -rf x", "echoOnly", "deny", DEFAULT],
  ["not allowed", "npm run build", "npm", "deny", DEFAULT],
  ["not allowed", "npm run test; curl x", "npm", "deny", DEFAULT],
];

const harnesses = new Map<RuleSet, TestHarness>();
const cwd = realpathSync(tmpdir());
async function harnessFor(rules: RuleSet): Promise<TestHarness> {
  let h = harnesses.get(rules);
  if (!h) {
    h = await policyHarness(rules, cwd);
    harnesses.set(rules, h);
  }
  return h;
}
afterAll(async () => {
  for (const h of harnesses.values()) await h.dispose();
});

describe("shell attack classes of issue 13 (security invariant 1)", () => {
  it.each(ATTACKS)("%s: %j under %s rules -> %s by %s", async (_klass, command, rules, decision, by) => {
    const h = await harnessFor(rules);
    const verdict = await h.checkToolCall({ name: "bash", args: { command } }, { skipPermission: true });
    expect({ decision: verdict.decision, by: verdict.by }, verdict.reason).toEqual({ decision, by });
  });

  it.each(ALLOWED)("%s: %j under %s rules -> %s by %s", async (_klass, command, rules, decision, by) => {
    const h = await harnessFor(rules);
    const verdict = await h.checkToolCall({ name: "bash", args: { command } }, { skipPermission: true });
    expect({ decision: verdict.decision, by: verdict.by }, verdict.reason).toEqual({ decision, by });
  });

  it("names what could not be understood and the rule no one can prove misses it", async () => {
    const h = await harnessFor("echo");
    const verdict = await h.checkToolCall(
      { name: "bash", args: { command: "$X -rf x" } },
      { skipPermission: true },
    );
    expect(verdict).toMatchObject({ decision: "ask", by: DENY_RM });
    expect(verdict.reason).toContain("command name decided at run time");
    expect(verdict.reason).toContain("bash(rm *)");
  });

  it("with no one to answer, an unknown command is denied", async () => {
    const h = await harnessFor("echo");
    const verdict = await h.checkToolCall({ name: "bash", args: { command: 'eval "$CMD"' } });
    expect(verdict.decision).toBe("deny");
  });
});
