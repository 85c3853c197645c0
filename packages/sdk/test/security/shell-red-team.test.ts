/**
 * Security invariant 1, red team of session 10: commands the analysis once reported as
 * understood (so an allow rule such as `bash(git status *)` plus `bash(printf *)` could
 * let them run) while real bash ran a program planted in the folder, ran a startup file
 * or a shared object, or ran other words than the ones listed. Each row is run in real
 * bash (under strace, see `oracle/bash-trace.ts`) with the planted files, and the trace
 * must show bash really doing it; the analysis must now say `unknown`, or list the
 * variable the command sets (so no allow rule covers it unless it names it), or list
 * exactly the words bash runs.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { analyzeShell, loadShellParser, type ShellCommandFacts } from "@rein/sdk/shell";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PlantedFile, type Trace, traceBash } from "./oracle/bash-trace.js";
import { judge } from "./oracle/judge.js";

/** A planted program: a shell script that only has to run to count. */
const PROGRAM: PlantedFile = { content: "#!/bin/sh\nexit 0\n", mode: 0o755 };
/** A startup file bash runs itself: the marker it writes is a write of bash's own. */
const STARTUP: PlantedFile = { content: ": > PWNED\n" };

let sharedObject: Uint8Array;
const build = mkdtempSync(path.join(tmpdir(), "rein-red-so-"));

beforeAll(async () => {
  execFileSync("strace", ["-V"], { stdio: "ignore" });
  execFileSync("bwrap", ["--version"], { stdio: "ignore" });
  // A shared object whose constructor writes the marker: loading it is running code.
  const source = path.join(build, "ev.c");
  writeFileSync(
    source,
    '#include <fcntl.h>\n#include <unistd.h>\n__attribute__((constructor)) static void run(void) { close(open("PWNED", O_CREAT | O_WRONLY, 0600)); }\n',
  );
  execFileSync("cc", ["-shared", "-fPIC", "-o", path.join(build, "ev"), source]);
  sharedObject = readFileSync(path.join(build, "ev"));
  await loadShellParser();
});
afterAll(() => rmSync(build, { recursive: true, force: true }));

/** bash ran something planted in the folder: a program found through a changed PATH, or the marker bash itself wrote. */
function plantedRan(trace: Trace): boolean {
  return (
    trace.executed.some((p) => !path.isAbsolute(p) || p.startsWith(`${trace.dir}/`)) ||
    trace.shellWrites.includes("PWNED")
  );
}

type Expect = { unknown: string } | { assigns: string };
type Row = [klass: string, script: string, planted: () => Record<string, PlantedFile>, expected: Expect];

const at =
  (...dirs: string[]) =>
  () =>
    Object.fromEntries(dirs.map((dir) => [`${dir}/git`, PROGRAM]));
/** bash gives a `{NAME}` redirection the first free descriptor from 10 up. */
const DESCRIPTORS = ["10", "11", "12", "13"];

/** Each script ends in `git status`, which an allow rule `bash(git status *)` covers. */
export const PLANTED: Row[] = [
  ["printf -v sets a variable", "printf -v PATH %s ./evil; git status", at("evil"), { assigns: "PATH=" }],
  ["read sets a variable", "read -r PATH <<< ./evil; git status", at("evil"), { assigns: "PATH=" }],
  ["read sets a variable", "read -ra PATH <<< ./evil; git status", at(".", "evil"), { assigns: "PATH=" }],
  [
    "mapfile sets a variable",
    "mapfile -t PATH <<< ./evil; git status",
    at(".", "evil"),
    { assigns: "PATH=" },
  ],
  ["mapfile sets a variable", "readarray PATH <<< ./evil; git status", at(".", "evil"), { assigns: "PATH=" }],
  ["getopts sets a variable", "getopts a PATH -a; git status", at("a"), { assigns: "PATH=" }],
  ["unset PATH searches the folder", "unset PATH; git status", at("."), { assigns: "PATH=" }],
  ["unset PATH searches the folder", "unset -v PATH; git status", at("."), { assigns: "PATH=" }],
  ["local PATH is unset", "f() { local PATH; git status; }; f", at("."), { assigns: "PATH=" }],
  ["local PATH is unset", "f() { declare PATH; git status; }; f", at("."), { assigns: "PATH=" }],
  ["local PATH is unset", "f() { typeset PATH; git status; }; f", at("."), { assigns: "PATH=" }],
  [
    "{NAME}> redirection sets a variable",
    "echo hi {PATH}>/dev/null; git status",
    at(...DESCRIPTORS),
    { unknown: "{NAME} redirection" },
  ],
  [
    "{NAME}> redirection sets a variable",
    "exec {PATH}</dev/null; git status",
    at(...DESCRIPTORS),
    { unknown: "{NAME} redirection" },
  ],
  [
    "xargs puts a variable in the environment",
    "echo | xargs --process-slot-var=PATH git status",
    at("0"),
    { unknown: "--process-slot-var" },
  ],
  [
    "interactive shell runs a startup file",
    "bash --rcfile ./evil.sh -ic 'git status'",
    () => ({ "evil.sh": STARTUP }),
    { unknown: "--rcfile" },
  ],
  [
    "interactive shell runs a startup file",
    "bash --init-file evil.sh -i -c 'git status'",
    () => ({ "evil.sh": STARTUP }),
    { unknown: "--init-file" },
  ],
  [
    "interactive shell runs a startup file",
    "HOME=. bash -ic 'git status'",
    () => ({ ".bashrc": STARTUP }),
    { unknown: "interactive shell" },
  ],
  [
    "a login shell runs its profile files",
    "HOME=. bash -l -c 'git status'",
    () => ({ ".bash_profile": STARTUP }),
    { unknown: "login shell" },
  ],
  [
    "a login shell runs its profile files",
    "HOME=. bash -lc 'git status'",
    () => ({ ".bash_profile": STARTUP }),
    { unknown: "login shell" },
  ],
  [
    "a login shell runs its profile files",
    "HOME=. bash +l -c 'git status'",
    () => ({ ".bash_profile": STARTUP }),
    { unknown: "login shell" },
  ],
  [
    "a login shell runs its profile files",
    "HOME=. bash +lc 'git status'",
    () => ({ ".bash_profile": STARTUP }),
    { unknown: "login shell" },
  ],
  [
    "a login shell runs its profile files",
    "HOME=. bash --login -c 'git status'",
    () => ({ ".bash_profile": STARTUP }),
    { unknown: "login shell" },
  ],
  [
    "a login shell runs its profile files",
    "HOME=. bash --noprofile --login -c 'git status; exit'",
    () => ({ ".bash_logout": STARTUP }),
    { unknown: "login shell" },
  ],
  [
    "a login shell runs its profile files",
    "HOME=. sh -l -c 'git status'",
    () => ({ ".profile": { content: "./p\n" }, p: PROGRAM }),
    { unknown: "login shell" },
  ],
  [
    "a program started under another name is a login shell",
    "HOME=. exec -l bash -c 'git status'",
    () => ({ ".bash_profile": STARTUP }),
    { unknown: "exec -l" },
  ],
  [
    "a program started under another name is a login shell",
    "HOME=. exec -a -bash bash -c 'git status'",
    () => ({ ".bash_profile": STARTUP }),
    { unknown: "exec -a" },
  ],
  [
    "enable loads a shared object",
    "enable ev; git status",
    () => ({ ev: { content: sharedObject } }),
    { unknown: "enable" },
  ],
  [
    "enable loads a shared object",
    "enable -s ev; git status",
    () => ({ ev: { content: sharedObject } }),
    { unknown: "enable" },
  ],
];

function check(facts: ShellCommandFacts, expected: Expect): void {
  if ("unknown" in expected)
    expect(facts.unknown.map((u) => u.reason).join("; ")).toContain(expected.unknown);
  else {
    expect(facts.commands.flatMap((c) => c.assignments)).toContainEqual(
      expect.stringMatching(new RegExp(`^${expected.assigns}`)),
    );
  }
}

describe("what bash runs through a changed PATH, a startup file or a shared object is never allowed as understood", () => {
  it.each(PLANTED)("%s: %j", async (_klass, script, planted, expected) => {
    const trace = await traceBash(script, 5000, planted());
    expect(plantedRan(trace), `bash ran the planted code: ${JSON.stringify(trace)}`).toBe(true);
    check(await analyzeShell(script), expected);
  });

  it("an allow of the same words without the planted change still runs the real program only", async () => {
    const trace = await traceBash("git status; printf -v x %s 1", 5000, at("evil")());
    expect(plantedRan(trace)).toBe(false);
  });
});

/** Scripts where bash runs a program under another name than the one listed (the oracle's judge sees it). */
export const RENAMED: [klass: string, script: string][] = [
  ["the hash table as a variable", "BASH_CMDS[0]=/usr/bin/touch; 0 x"],
  ["the hash table as a variable", "BASH_CMDS=/usr/bin/touch; 0 x"],
  ["the hash table as a variable", "printf -v BASH_CMDS %s /usr/bin/touch; 0 x"],
  ["the hash table as a variable", "read BASH_CMDS <<< /usr/bin/touch; 0 x"],
  ["the hash table as a variable", "for BASH_CMDS in /usr/bin/touch; do 0 x; done"],
  ["the alias table as a variable", "bash -O expand_aliases -c $'BASH_ALIASES[0]=touch\n0 x'"],
  ["the alias table as a variable", "bash --posix -c $'BASH_ALIASES[0]=touch\n0 x'"],
];

/** Scripts where bash runs a program the analysis does not list at all. */
export const HIDDEN: [klass: string, script: string, reason: string][] = [
  [
    "an exported function through env",
    "env 'BASH_FUNC_git%%=() { touch x; }' bash -c 'git status'",
    "BASH_FUNC",
  ],
];

describe("a program bash runs that the analysis cannot list is unknown", () => {
  it.each(HIDDEN)("%s: %j", async (_klass, script, reason) => {
    const trace = await traceBash(script);
    const facts = await analyzeShell(script);
    expect(judge(facts, trace, true)?.unlisted).toContain("touch");
    expect(facts.unknown.map((u) => u.reason).join("; ")).toContain(reason);
  });
});

describe("a program bash runs under another name is unknown", () => {
  it.each(RENAMED)("%s: %j", async (_klass, script) => {
    const trace = await traceBash(script);
    const facts = await analyzeShell(script);
    expect(judge(facts, trace, true)?.unlisted).toEqual(["touch"]);
    expect(facts.unknown.map((u) => u.reason).join("; ")).toContain("BASH_CMDS or BASH_ALIASES");
  });
});

/** Words bash really runs, as the analysis must list them. */
export const WORDS: [klass: string, script: string][] = [
  ["a NUL ends $'...'", "$'ls\\0x' $'a\\0b'c"],
  ["a NUL ends $'...'", "ls $'-\\x00la' $'x\\c@y'"],
  ["a NUL ends $'...'", "l$'s\\u0000q' $'\\U00000000z'"],
  ["a translated string", 'ls $"push" a$"b"c'],
  ["a translated string", '$"ls" $"x y"'],
  ["a translated string", 'ls $"b"c $"a"$"b" "$" a$'],
  ["a tilde is a home folder", "ls ~ ~/x ~+ '~' ~ a~"],
  ["a tilde is a home folder", "ls ~root/.ssh"],
];

describe("the words bash runs are the words the analysis lists", () => {
  it.each(WORDS)("%s: %j", async (_klass, script) => {
    const trace = await traceBash(script);
    const facts = await analyzeShell(script);
    expect(trace.argv).toHaveLength(1);
    expect(judge(facts, trace, true)).toBeUndefined();
    const ls = facts.commands.find((c) => c.argv[0] === "ls");
    const ran = trace.argv[0] ?? [];
    expect(ls?.argv).toHaveLength(ran.length);
    // A word the analysis lists as literal is the word bash passed; any other must be marked decided at run time.
    const differing = ran.flatMap((word, i) => (ls?.argv[i] === word ? [] : [i]));
    for (const i of differing) expect(ls?.expanded, `word ${i} of ${JSON.stringify(ran)}`).toContain(i);
  });

  it("a translated string is decided at run time (a message catalogue may translate it)", async () => {
    const facts = await analyzeShell('git $"push" origin');
    expect(facts.commands[0]).toMatchObject({ argv: ["git", "push", "origin"], expanded: [1] });
    expect((await analyzeShell('$"rm" x')).unknown.map((u) => u.reason).join()).toContain(
      "command name decided at run time",
    );
  });

  it("env -C runs the command elsewhere: only the words as written describe it", async () => {
    const facts = await analyzeShell("env -C /tmp git status");
    expect(facts.commands[0]).toMatchObject({ argv: ["git", "status"], direct: false });
  });
});
