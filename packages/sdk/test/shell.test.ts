/**
 * @rein/sdk/shell: words as bash sees them, every simple command anywhere, wrappers
 * unwrapped, and `unknown` for what is decided at run time - never an exception.
 */
import * as sdk from "@rein/sdk";
import * as shell from "@rein/sdk/shell";
import { analyzeShell, type SimpleCommandFacts } from "@rein/sdk/shell";
import { describe, expect, it } from "vitest";

const argvs = async (source: string) => (await analyzeShell(source)).commands.map((c) => c.argv);
const only = async (source: string): Promise<SimpleCommandFacts> => {
  const facts = await analyzeShell(source);
  expect(facts.commands, source).toHaveLength(1);
  return facts.commands[0] as SimpleCommandFacts;
};

describe("the entry", () => {
  it("exports the analysis from @rein/sdk/shell only, so plugins that do not parse shell do not load it", () => {
    expect(Object.keys(shell).sort()).toEqual([
      "MAX_SHELL_SOURCE",
      "analyzeShell",
      "loadShellParser",
      "normaliseGit",
    ]);
    expect(Object.keys(sdk)).not.toContain("analyzeShell");
  });
});

it("gives what the README's example says", async () => {
  const facts = await analyzeShell("cd app && sudo -u ci env A=1 /usr/bin/git -C . push");
  expect(facts.commands[1]).toEqual({
    argv: ["git", "-C", ".", "push"],
    normalized: ["git", "push"],
    wrappers: ["sudo", "env"],
    assignments: ["A=1"],
    redirections: [],
    direct: false,
    expanded: [],
    openArgs: false,
    original: ["sudo", "-u", "ci", "env", "A=1", "/usr/bin/git", "-C", ".", "push"],
    context: ["list"],
  });
  expect(facts.unknown).toEqual([]);
});

describe("quote removal as bash does it", () => {
  it.each([
    ["$'\\x67it' push", ["git", "push"]],
    ["$'\\147it' push", ["git", "push"]],
    ['"git" push', ["git", "push"]],
    ["g''it push", ["git", "push"]],
    ["\\git pu\\sh", ["git", "push"]],
    ["g\\\nit push", ["git", "push"]],
    ['echo "a\\"b" \'c d\' e\\ f', ["echo", 'a"b', "c d", "e f"]],
    ['echo "x\\\ny"', ["echo", "xy"]],
    ["echo $'a\\tb\\u00e9'", ["echo", "a\tbé"]],
  ])("%j", async (source, argv) => {
    expect(await argvs(source)).toEqual([argv]);
  });
});

describe("every simple command anywhere", () => {
  it.each([
    ["a && b || c; d | e & f", ["a", "b", "c", "d", "e", "f"]],
    ["(a; { b; })", ["a", "b"]],
    ['echo $(a) `b` "$(c)"', ["echo", "a", "b", "c"]],
    ["f() { a; }", ["a"]],
    ["for i in 1; do a; done; while b; do c; done", [undefined, "a", "b", "c"]],
    ["case x in y) a;; *) b;; esac", ["a", "b"]],
    ["if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]],
    ["echo hi # comment; rm x\nb", ["echo", "b"]],
    ["X=$(a)", [undefined, "a"]],
    ["cat <<EOF\n$(a)\nEOF", ["cat", "a"]],
    ["echo `echo \\`a\\``", ["echo", "echo", "a"]],
  ])("%j", async (source, names) => {
    expect((await argvs(source)).map((argv) => argv[0])).toEqual(names);
  });

  it("records where each command sits, in source order", async () => {
    const facts = await analyzeShell("f() { (echo $(a) | b); }");
    expect(facts.commands.map((c) => [c.argv[0], c.context])).toEqual([
      ["echo", ["function", "group", "subshell", "pipeline"]],
      ["a", ["function", "group", "subshell", "pipeline", "substitution"]],
      ["b", ["function", "group", "subshell", "pipeline"]],
    ]);
  });

  it("keeps assignments and redirections, leading ones included", async () => {
    expect(await only(">out A=1 B='x y' git push 2>&1")).toMatchObject({
      argv: ["git", "push"],
      assignments: ["A=1", "B=x y"],
      redirections: expect.arrayContaining([
        { op: ">", target: "out" },
        { op: "2>&", target: "1" },
      ]),
    });
  });
});

describe("wrappers", () => {
  it.each([
    [
      "sudo -u root env A=1 nice -n 5 /usr/bin/git -C dir push",
      ["git", "-C", "dir", "push"],
      ["sudo", "env", "nice"],
      false,
    ],
    ["timeout -s KILL 5 nohup command git push", ["git", "push"], ["timeout", "nohup", "command"], true],
    ["time -p stdbuf -o0 exec git push", ["git", "push"], ["time", "stdbuf", "exec"], true],
    ["./git push", ["git", "push"], [], false],
  ])("%j", async (source, argv, wrappers, direct) => {
    const command = await only(source);
    expect(command).toMatchObject({ argv, wrappers, direct });
    expect(command.original).toEqual(source.split(" "));
  });

  it("normalises git's global options for matching and keeps them visible", async () => {
    expect(await only("git -C dir -c a=b --no-pager --git-dir=.git push x")).toMatchObject({
      argv: ["git", "-C", "dir", "-c", "a=b", "--no-pager", "--git-dir=.git", "push", "x"],
      normalized: ["git", "push", "x"],
    });
  });

  it("parses bash -c, sh -c and eval strings again", async () => {
    const facts = await analyzeShell("bash -c 'a; sh -c \"b\"' && eval 'c | d'");
    expect(facts.commands.map((c) => [c.argv[0], c.wrappers])).toEqual([
      ["a", ["bash"]],
      ["b", ["bash", "sh"]],
      ["c", ["eval"]],
      ["d", ["eval"]],
    ]);
    expect(facts.unknown).toEqual([]);
  });

  it("reports xargs and find -exec commands on their own", async () => {
    const facts = await analyzeShell("ls | xargs -n1 rm -f; find . -exec chmod 600 {} +");
    expect(facts.commands.map((c) => [c.argv, c.openArgs, c.expanded])).toEqual([
      [["ls"], false, []],
      [["xargs", "-n1", "rm", "-f"], false, []],
      [["rm", "-f"], true, []],
      [["find", ".", "-exec", "chmod", "600", "{}", "+"], false, []],
      [["chmod", "600", "{}"], false, [2]],
    ]);
  });
});

describe("unknown: what is decided at run time", () => {
  it.each([
    ["$X push", "command name decided at run time"],
    ["$(echo git) push", "command name decided at run time"],
    // biome-ignore lint/suspicious/noTemplateCurlyInString: bash text, not a template
    ["g${IFS}it push", "command name decided at run time"],
    ["{git,push} origin", "syntax error"],
    ["r{m,x} y", "command name decided at run time"],
    ['eval "$X"', "eval of a string decided at run time"],
    ["source x.sh", "source runs the commands of a file"],
    [". x.sh", ". runs the commands of a file"],
    ["cat <(ls)", "process substitution"],
    ["bash <<EOF\nrm x\nEOF", "bash reads commands from standard input"],
    ["echo x | python3", "python3 reads its program from standard input"],
    ['bash -c "$X"', "decided at run time"],
    ["echo $((x))", "arithmetic on something other than literals"],
    ["env -S 'a b'", "env: env -S splits a string into a command"],
    ["sudo -s", "sudo: sudo -s runs a shell"],
    ["echo (", "syntax error"],
    ["echo hi\n\\rm x", "the parser read a word where bash would not"],
  ])("%j: %s", async (source, reason) => {
    const facts = await analyzeShell(source);
    expect(facts.unknown.map((u) => u.reason).join("; ")).toContain(reason);
  });

  it("is empty for what is fully understood", async () => {
    for (const source of [
      "git status && npm run test -- -u",
      'echo "$HOME" > /dev/null 2>&1',
      "ls *.ts | wc -l",
    ]) {
      expect((await analyzeShell(source)).unknown, source).toEqual([]);
    }
  });

  it("marks words decided at run time (variables, globs, braces)", async () => {
    expect((await only("rm -rf $DIR *.ts {a,b} plain")).expanded).toEqual([2, 3, 4]);
  });
});

describe("never throws", () => {
  it.each([
    ["deep nesting", `${"$(".repeat(3000)}x${")".repeat(3000)}`],
    ["unterminated quotes", "echo 'abc"],
    ["control bytes", "\u0000\u0001\u001b[31m;|&"],
    ["huge input", "a ".repeat(200_000)],
    ["deep bash -c", `${"bash -c '".repeat(5)}x${"'".repeat(5)}`],
  ])("%s", async (_name, source) => {
    const facts = await analyzeShell(source);
    expect(facts.source).toBe(source);
    expect(Array.isArray(facts.unknown)).toBe(true);
  });

  it("gives unknown for what is not a string", async () => {
    const facts = await analyzeShell(42 as unknown as string);
    expect(facts.unknown[0]?.reason).toBe("the command is not a string");
  });
});
