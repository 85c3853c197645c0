/**
 * A generated set of shell commands built from the attack classes of issue 13:
 * a denied command (`touch pwned`, `rm -rf pwned`, `git push origin`) spelled in many
 * ways (quoting, escapes, ANSI-C, absolute paths, backslash-newline), behind wrappers
 * (`env`, `sudo`, `nice`, `bash -c`, `eval`, ...), inside every kind of nesting (lists,
 * pipelines, substitutions, functions, loops, case arms, here-docs), with spacing
 * mutations. Assertions: no command carrying a denied command is allowed; the
 * analysis never throws or crashes (unknown syntax is `unknown`); the same shapes
 * with a harmless payload are still allowed where nothing is unknown; and in a
 * sample run in a real bash the attacks do work, so the set is not vacuous.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { analyzeShell } from "@rein/sdk/shell";
import { describe, expect, it } from "vitest";
import { compilePolicy, evaluateRules, SHELL_TOOLS } from "../../src/index.js";
import { RULES } from "./shell-rules.js";

const sq = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
const dq = (text: string) => `"${text.replace(/[\\"$`]/g, (c) => `\\${c}`)}"`;
const hex = (word: string) => `$'${[...word].map((c) => `\\x${c.charCodeAt(0).toString(16)}`).join("")}'`;

/** Ways to spell one word so that bash still reads it as that word. */
const SPELLINGS: ((w: string) => string)[] = [
  (w) => w,
  (w) => `"${w}"`,
  (w) => `'${w}'`,
  (w) => `${w[0]}''${w.slice(1)}`,
  (w) => `\\${w}`,
  (w) => `${w[0]}\\${w.slice(1)}`,
  hex,
  (w) => `$'\\${(w.charCodeAt(0) as number).toString(8)}'${w.slice(1)}`,
  (w) => `"${w[0]}"${w.slice(1)}`,
  (w) => `${w.slice(0, 2)}\\\n${w.slice(2)}`,
  (w) => `/usr/bin/${w}`,
  (w) => `${w[0]}"${w.slice(1)}"`,
];

const PAYLOADS: string[][] = [
  ["touch", "pwned"],
  ["rm", "-rf", "pwned"],
  ["git", "push", "origin"],
];

const WRAPPERS: ((c: string) => string)[] = [
  (c) => c,
  (c) => `env ${c}`,
  (c) => `env -i A=1 ${c}`,
  (c) => `command ${c}`,
  (c) => `exec ${c}`,
  (c) => `nohup ${c}`,
  (c) => `sudo -u root ${c}`,
  (c) => `timeout 5 ${c}`,
  (c) => `time ${c}`,
  (c) => `nice -n 1 ${c}`,
  (c) => `stdbuf -o0 ${c}`,
  (c) => `bash -c ${sq(c)}`,
  (c) => `sh -c ${dq(c)}`,
  (c) => `eval ${sq(c)}`,
  (c) => `bash -c ${sq(`sh -c ${sq(c)}`)}`,
];

const CONTEXTS: ((c: string) => string)[] = [
  (c) => c,
  (c) => `echo hi; ${c}`,
  (c) => `echo hi && ${c}`,
  (c) => `echo hi || ${c}`,
  (c) => `echo hi | ${c}`,
  (c) => `echo hi & ${c}`,
  (c) => `echo $(${c})`,
  (c) => `echo \`${c.replace(/[\\`$]/g, (m) => `\\${m}`)}\``,
  (c) => `(${c})`,
  (c) => `{ ${c}; }`,
  (c) => `f() { ${c}; }; f`,
  (c) => `for i in 1; do ${c}; done`,
  (c) => `while true; do ${c}; break; done`,
  (c) => `if true; then echo hi; else ${c}; fi`,
  (c) => `case x in x) ${c};; esac`,
  (c) => `echo hi # note\n${c}`,
  (c) => `echo hi \\\n; ${c}`,
  (c) => `cat <(${c})`,
  (c) => `X=$(${c}) echo hi`,
  (c) => `>out ${c}`,
  (c) => `! ${c}`,
  (c) => `echo "$(${c})"`,
  (c) => `echo \${x:-$(${c})}`,
  (c) => `cat <<EOF\n$(${c})\nEOF`,
  (c) => `cat <<-EOF\n\t$(${c})\n\tEOF`,
  (c) => `echo hi;${c}`,
  (c) => `echo hi\n${c}`,
  (c) => `x=\`${c.replace(/[\\`$]/g, (m) => `\\${m}`)}\``,
];

const SPACING: ((c: string) => string)[] = [
  (c) => c,
  (c) => c.replace(/ /g, "\t"),
  (c) => c.replace(/ /g, "  "),
];

interface Generated {
  command: string;
  payload: string;
}

/** Every spelling x wrapper x context, for each payload; spacing rotates. */
function generate(payloads: string[][]): Generated[] {
  const out: Generated[] = [];
  let n = 0;
  for (const payload of payloads) {
    for (const spell of SPELLINGS) {
      // The rule-relevant words are spelled: the command name, and `push` for git.
      const words = payload.map((w, i) => {
        if (i === 0) return spell(w);
        // `push` is spelled too, except as a path (`git /usr/bin/push` is no push).
        return payload[0] === "git" && i === 1 && spell !== SPELLINGS[10] ? spell(w) : w;
      });
      for (const wrap of WRAPPERS) {
        for (const context of CONTEXTS) {
          const space = SPACING[n++ % SPACING.length] as (c: string) => string;
          out.push({ command: context(wrap(space(words.join(" ")))), payload: payload.join(" ") });
        }
      }
    }
  }
  return out;
}

/** The reasons `analyzeShell` gives when it caught an exception instead of understanding the command. */
const CRASH = /^(?:analysis failed|the shell parser could not load|the parser gave no tree)/;

const where = { cwd: "/work", root: "/work" };
const kinds = { pathTools: [], shellTools: [...SHELL_TOOLS] };

async function verdictOf(rules: Awaited<ReturnType<typeof compilePolicy>>, command: string) {
  const facts = await analyzeShell(command);
  return { facts, verdict: evaluateRules(rules, { name: "bash", args: { command } }, kinds, where, facts) };
}

describe("generated shell mutations (security invariant 1)", () => {
  it("allows none of the commands carrying a denied command, and never crashes", async () => {
    const rules = await compilePolicy({ rules: RULES.touch, pathTools: [], shellTools: ["bash"] }, where);
    const attacks = generate(PAYLOADS);
    expect(attacks.length).toBeGreaterThanOrEqual(5000);
    const counts = { deny: 0, ask: 0, none: 0, allow: 0, crashes: 0 };
    const allowed: string[] = [];
    for (const { command } of attacks) {
      const { facts, verdict } = await verdictOf(rules, command);
      if (facts.unknown.some((u) => CRASH.test(u.reason))) counts.crashes++;
      const decision = verdict?.decision ?? "none";
      counts[decision]++;
      if (decision === "allow") allowed.push(command);
    }
    console.info(`shell fuzz: ${attacks.length} attack commands: ${JSON.stringify(counts)}`);
    expect(allowed).toEqual([]);
    expect(counts.crashes).toBe(0);
    expect(counts.none).toBe(0);
  }, 300_000);

  it("still allows the same shapes with a harmless payload where nothing is unknown", async () => {
    const rules = await compilePolicy({ rules: RULES.touch, pathTools: [], shellTools: ["bash"] }, where);
    const harmless = generate([["echo", "pwned"]]);
    let allowed = 0;
    let understood = 0;
    for (const { command } of harmless) {
      const { facts, verdict } = await verdictOf(rules, command);
      if (facts.unknown.length > 0) continue;
      understood++;
      // Only the wrappers that change what runs (sudo, env -i A=1) or write files keep an allow back.
      if (verdict?.decision === "allow") allowed++;
    }
    console.info(
      `shell fuzz: ${harmless.length} harmless commands, ${understood} fully understood, ${allowed} allowed`,
    );
    expect(understood).toBeGreaterThan(harmless.length / 2);
    expect(allowed).toBeGreaterThan(understood / 2);
  }, 300_000);

  it("the attacks are real: a sample run in plain bash creates the marker", () => {
    const sample = generate([["touch", "pwned"]]).filter((_, i) => i % 23 === 0 && true);
    const runnable = sample.filter(
      ({ command }) => !command.includes("sudo") && !command.includes("/usr/bin/touch\\"),
    );
    let created = 0;
    for (const { command } of runnable) {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), "rein-fuzz-")));
      try {
        try {
          execFileSync("/bin/bash", ["-c", `${command}\nwait`], {
            cwd: dir,
            stdio: "ignore",
            timeout: 10_000,
          });
        } catch {
          // A failing exit status is fine; the marker tells whether the payload ran.
        }
        if (existsSync(join(dir, "pwned"))) created++;
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    console.info(
      `shell fuzz: ${created} of ${runnable.length} sampled attacks created the marker in plain bash`,
    );
    expect(created).toBeGreaterThan(runnable.length * 0.8);
  }, 300_000);
});
