// biome-ignore-all lint/suspicious/noTemplateCurlyInString: bash text, not templates
/**
 * Security invariant 1, in the analysis itself: what is understood comes from the
 * table of syntax (`src/shell/syntax.ts`, `expansions.ts`, `builtins.ts`); every place
 * bash evaluates text as arithmetic, a name or code is `unknown` unless it is a
 * literal; loop words are arguments and loop variables assignments; forms the
 * grammar misreads are `unknown`, not a wrong known command.
 */
import { analyzeShell } from "@rein/sdk/shell";
import { describe, expect, it } from "vitest";

const reasons = async (source: string) =>
  (await analyzeShell(source)).unknown.map((u) => u.reason).join("; ");

describe("every place bash evaluates text is unknown unless literal", () => {
  it.each([
    ["((x))", "arithmetic"],
    ["(( a[i] ))", "arithmetic"],
    ["echo $((x + 1))", "arithmetic"],
    ['echo "$(( $x ))"', "arithmetic"],
    ["echo $[x]", "arithmetic"],
    ["for ((i=0; i<n; i++)); do echo; done", "arithmetic"],
    ["[[ $x -eq 1 ]]", "arithmetic"],
    ["[[ 1 -lt y ]]", "arithmetic"],
    ["let x=1+y", "let"],
    ["echo ${a[i]}", "subscript"],
    ["echo ${a[$i]}", "subscript"],
    ["a[i]=1", "subscript"],
    ["a=([k]=1)", "subscript"],
    ["echo ${x:n}", "substring offset"],
    ["echo ${x:1:n}", "substring offset"],
    ["echo ${a[@]:n}", "substring offset"],
    ["echo ${!x}", "indirect expansion"],
    ["echo ${x@P}", "prompt expansion"],
    ["echo ${x:=v}", "assignment inside an expansion"],
    ["declare -i n", "declare -i"],
    ["declare -n r=x", "declare -n"],
    ["local -n r=x", "local -n"],
    ["typeset -i n=1", "typeset -i"],
    ['declare "$x"', "decided at run time"],
    ["declare 'a[$(x)]=1'", "plain literal"],
    ['[[ -v "a[$(x)]" ]]', "plain literal"],
    ['test -v "$x"', "plain literal"],
    ["[ -v 'a[i]' ]", "plain literal"],
    ['printf -v "$x" %s 1', "plain literal"],
    ["printf -v 'a[i]' %s 1", "plain literal"],
    ['read "$x"', "decided at run time"],
    ["read -a 'a[i]'", "plain literal"],
    ['mapfile "$x"', "decided at run time"],
    ["mapfile -C 'rm x' -c 1", "callback"],
    ["getopts a 'a[i]'", "plain literal"],
    ['wait -p "$x" -n', "plain literal"],
    ['unset "$x"', "decided at run time"],
    ["set -x", "set -x"],
    ["set -o xtrace", "set -o xtrace"],
    ["shopt -s expand_aliases", "shopt expand_aliases"],
    ["compgen -W '$(rm x)' a", "compgen"],
    ["complete -C 'rm x' git", "complete"],
    ["fc -s", "fc"],
    ["bind -x '\"a\": rm x'", "bind"],
    ['trap "$x" EXIT', "trap action decided at run time"],
    ["alias ls='rm x'", "alias"],
    ['eval "$x"', "eval of a string decided at run time"],
    ["source x.sh", "source"],
    ["cat <<EOF\n$((x))\nEOF", "arithmetic"],
    ["cat <<EOF\n${!x}\nEOF", "indirect expansion"],
  ])("%j: %s", async (source, reason) => {
    expect(await reasons(source)).toContain(reason);
  });

  it.each([
    "echo $((1 + 2 * 3)) $[4] $(( $# + $? ))",
    "(( 1 < 2 ))",
    "[[ 1 -eq 1 && $# -gt 0 ]]",
    "echo ${a[@]} ${a[*]} ${a[1]} ${a[-1]} ${#a[@]} ${!a[@]} ${!pre*}",
    "echo ${x:-d} ${x-d} ${x:+a} ${x:?e} ${x#a} ${x##a*} ${x%b} ${x%%b} ${x/a/b} ${x//a} ${x^^} ${x,} ${x@Q}",
    "echo ${x:1} ${x:1:2} ${x: -1}",
    "declare x=1 y; export PATH_X=1; local z; readonly w=2; declare -a a=(1 2) -x q",
    "[[ -v x ]] && test -v y && [ -v z ]",
    "printf -v out %s 1; read -r line; read -a arr; mapfile -t lines; getopts ab opt",
    "set -euo pipefail; set -- a b; shopt -s nullglob",
    "let 1+2",
    "a[1]=x; a=([2]=y z)",
  ])("%j is understood", async (source) => {
    expect((await analyzeShell(source)).unknown).toEqual([]);
  });
});

describe("loops", () => {
  it("analyses loop words like arguments: their substitutions are commands", async () => {
    const facts = await analyzeShell("for x in $(rm -rf y) b; do echo $x; done");
    expect(facts.commands.map((c) => c.argv)).toEqual([[], ["rm", "-rf", "y"], ["echo", "$x"]]);
  });

  it("treats the loop variable as an assignment, so HOME= and PATH= through a loop are seen", async () => {
    const facts = await analyzeShell("for HOME in /tmp 'a b'; do git status; done");
    expect(facts.commands[0]).toMatchObject({ argv: [], assignments: ["HOME=/tmp", "HOME=a b"] });
    expect(facts.commands[1]).toMatchObject({ argv: ["git", "status"], context: ["loop"] });
    expect(facts.unknown).toEqual([]);
  });

  it("a loop without `in` assigns the positional parameters", async () => {
    const facts = await analyzeShell("for x; do echo; done");
    expect(facts.commands[0]?.assignments).toEqual(["x=$@"]);
  });

  it("select is a loop like for", async () => {
    const facts = await analyzeShell("select x in $(rm y); do break; done");
    expect(facts.commands.map((c) => c.argv[0])).toContain("rm");
  });
});

describe("what tree-sitter-bash misreads is unknown, not a wrong known command", () => {
  it.each([
    ["coproc c { rm x; }", "coproc"],
    ["coproc rm x", "coproc"],
    ["time { rm x; }", "reserved word"],
    ["echo hi <<EOF\nEOF && echo '$(rm x)'", "here-doc delimiter line"],
    ["echo 2>/dev/null rm x", "words after a redirection's target"],
    ['ls `echo a "\\$x"` `rm x`', "backticks the parser did not delimit"],
    ["cat <<-EOF\n\t$(rm -rf x)\n\tEOF", "here-doc body"],
    ["echo hi\n\\rm x", "the parser read a word where bash would not"],
    ["echo (", "syntax error"],
    // Found by the oracle: single quotes inside a double-quoted expansion are plain text to bash.
    ["echo \"${x:-'$(rm x)'}\"", "quotes inside a double-quoted expansion"],
    ["cat <<EOF\n${x:-'$(rm x)'}\nEOF", "quotes inside a double-quoted expansion"],
    // The grammar reads `$((y))` inside `${...}` as a substitution of a subshell running `y`.
    ['echo "${x:-$((y))}"', "read as a subshell where bash reads arithmetic"],
    ["echo ${x:+$((y))}", "read as a subshell where bash reads arithmetic"],
    // Found by the deep oracle run: a `$u` the grammar read stood in for a `$(` it did not.
    [
      'cat <<-EOF\n\t$(u=1; [ -z "$u" ]; rm x)\n\tEOF',
      "here-doc body with expansions the parser did not read",
    ],
  ])("%j: %s", async (source, reason) => {
    expect(await reasons(source)).toContain(reason);
  });

  it("sees the rest of a pipeline the grammar hangs inside a here-doc", async () => {
    const facts = await analyzeShell("cat <<EOF | rm x\nhi\nEOF");
    expect(facts.commands.map((c) => c.argv)).toEqual([["cat"], ["rm", "x"]]);
  });

  it("keeps a command's assignments behind `time`", async () => {
    const facts = await analyzeShell("time PATH=/tmp git status");
    expect(facts.commands[0]).toMatchObject({ argv: ["git", "status"], assignments: ["PATH=/tmp"] });
  });

  it("lists the redirections of a body that runs no command", async () => {
    const facts = await analyzeShell("(( 1 )) > out; f() { (( 1 )); } 2> err");
    expect(facts.commands.flatMap((c) => c.redirections.map((r) => r.target))).toEqual(["out", "err"]);
    // Found by the deep oracle run: the subject's substitution runs a command, the arm none.
    const inCase = await analyzeShell("case $(ls) in *) (( 2 )) ;; esac > o2");
    expect(inCase.commands.flatMap((c) => c.redirections.map((r) => r.target))).toEqual(["o2"]);
  });

  it("lists the shell of a string that runs no command", async () => {
    const facts = await analyzeShell("env bash -c '(( 1 ))'");
    expect(facts.commands.map((c) => c.argv[0])).toEqual(["bash"]);
  });
});
