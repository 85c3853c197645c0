/**
 * Shell rules over the parsed command (`@rein/sdk/shell`), never over raw text.
 *
 * Invariants (security invariant 1):
 * - a deny or ask rule matches when it matches ANY simple command anywhere in the
 *   tree (argv after unwrapping, git's global options dropped, or the words as
 *   written); a word decided at run time may be anything, so a rule whose pattern
 *   the known words could still lead to "may match" and gets `ask`;
 * - an allow rule counts only when EVERY simple command is covered by some allow
 *   rule, nothing is `unknown`, and the covered text includes the command's
 *   assignments and file-writing redirections, so `PATH=... git status` or
 *   `git status > .git/hooks/x` needs a rule that names them;
 * - with unknown parts and any deny or ask rule for the tool, the verdict is `ask`
 *   naming the rule no one can prove the command misses, and what was not understood.
 */
import type { ShellCommandFacts, SimpleCommandFacts } from "@rein/sdk/shell";
import { commandMatcher } from "./grammar.js";
import type { CompiledRule, PolicyVerdict } from "./rules.js";

/** Stands for a word decided at run time: only a `*` of a pattern matches it. */
const RUN_TIME = "\u0000";

interface ShellMatchers {
  full(candidate: string): boolean;
  /** Could some text starting with `prefix` match the pattern? */
  prefix(prefix: string): boolean;
}

const matcherCache = new WeakMap<CompiledRule, ShellMatchers>();

function matchers(rule: CompiledRule): ShellMatchers {
  let cached = matcherCache.get(rule);
  if (!cached) {
    const pattern = rule.pattern;
    if (pattern === undefined) cached = { full: () => true, prefix: () => true };
    else {
      const normal = normaliseCommandPattern(pattern);
      cached = { full: commandMatcher(normal), prefix: prefixMatcher(normal) };
    }
    matcherCache.set(rule, cached);
  }
  return cached;
}

/**
 * A command pattern written with shell quoting, in the form candidates are shown:
 * `python -c "print(1)"` is `python -c print(1)`, `git commit -m "a b"` is
 * `git commit -m 'a b'`; a quoted or escaped `*` is a literal star (`\*`). Patterns come
 * from the configuration (trusted), so a small lexer is enough here.
 */
export function normaliseCommandPattern(pattern: string): string {
  const words: string[] = [];
  let word: string | undefined;
  let quoted = false;
  const push = (text: string) => {
    word = (word ?? "") + text;
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(quoted ? quote(word) : word);
      word = undefined;
      quoted = false;
    } else if (c === "'" || c === '"') {
      const end = pattern.indexOf(c, i + 1);
      const body = pattern.slice(i + 1, end < 0 ? pattern.length : end);
      const text = c === '"' ? body.replace(/\\([$`"\\])/g, "$1") : body;
      push(text.replace(/\*/g, "\\*"));
      quoted = true;
      i = end < 0 ? pattern.length : end;
    } else if (c === "\\" && i + 1 < pattern.length) {
      const next = pattern[++i] as string;
      push(next === "*" ? "\\*" : next);
      if (/\s/.test(next)) quoted = true;
    } else push(c);
  }
  if (word !== undefined) words.push(quoted ? quote(word) : word);
  return words.join(" ");
}

function quote(word: string): string {
  return /[\s'"]/.test(word.replace(/\\\*/g, "")) ? `'${word.replace(/'/g, "'\\''")}'` : word;
}

/** For a pattern of literals and `*`: whether some completion of `prefix` matches. */
export function prefixMatcher(pattern: string): (prefix: string) => boolean {
  const normal = pattern.replace(/\s+/g, " ").trim();
  const tokens: (string | null)[] = [];
  for (let i = 0; i < normal.length; i++) {
    const c = normal[i] as string;
    if (c === "\\" && normal[i + 1] === "*") {
      tokens.push("*");
      i++;
    } else tokens.push(c === "*" ? null : c);
  }
  return (prefix) => {
    let states = closure(new Set([0]), tokens);
    for (const c of prefix) {
      const next = new Set<number>();
      for (const j of states) {
        const token = tokens[j];
        if (j >= tokens.length) continue;
        if (token === null) next.add(j);
        else if (token === c) next.add(j + 1);
      }
      states = closure(next, tokens);
      if (states.size === 0) return false;
    }
    return true;
  };
}

function closure(states: Set<number>, tokens: readonly (string | null)[]): Set<number> {
  const out = new Set(states);
  for (const j of states) for (let k = j; k < tokens.length && tokens[k] === null; k++) out.add(k + 1);
  return out;
}

/** A word as shown in an allow candidate: quoted when it holds spaces or quotes, so `git "push x"` is not `git push x`. */
function shown(word: string): string {
  if (word === RUN_TIME || !/[\s'"\\]/.test(word)) return word;
  return `'${word.replace(/'/g, "'\\''")}'`;
}

const HARMLESS_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"]);

/** Whether an allow rule covers the command: its text matches, and a file-writing redirection is written in the rule too. */
function allowCovers(rule: CompiledRule, command: SimpleCommandFacts): boolean {
  if (rule.pattern === undefined) return true;
  if (writingRedirections(command).length > 0 && !rule.pattern.includes(">")) return false;
  return allowCandidates(command).some((c) => matchers(rule).full(c));
}

/** Redirections that can change what runs later: writes to files (not `/dev/null`, not fd duplication). */
function writingRedirections(command: SimpleCommandFacts): string[] {
  return command.redirections
    .filter((r) => /[>]/.test(r.op) && !HARMLESS_TARGETS.has(r.target))
    .filter((r) => !(r.op.endsWith(">&") && /^(?:\d+|-)$/.test(r.target)))
    .map((r) => `${r.op} ${r.target}`);
}

function withRunTime(
  words: readonly string[],
  command: SimpleCommandFacts,
  expandedApply: boolean,
): string[] {
  const out = words.map((w, i) => (expandedApply && command.expanded.includes(i) ? RUN_TIME : w));
  if (command.openArgs) out.push(RUN_TIME);
  return out;
}

/** What an allow rule must match for the command to be covered. */
export function allowCandidates(command: SimpleCommandFacts): string[] {
  const tail = writingRedirections(command);
  const text = (words: readonly string[]) =>
    [...command.assignments.map(shown), ...words.map(shown), ...tail].join(" ");
  const candidates = new Set<string>();
  if (command.direct) candidates.add(text(withRunTime(command.argv, command, true)));
  // The words as written (wrappers and paths included); run-time words stay run-time when they line up with argv.
  const aligned = command.original.length === command.argv.length && command.wrappers.length === 0;
  candidates.add(text(aligned ? withRunTime(command.original, command, true) : command.original));
  return [...candidates];
}

/** What a deny or ask rule is matched against: every spelling of the command. */
export function denyCandidates(command: SimpleCommandFacts): string[] {
  const assignments = command.assignments.join(" ");
  const redirections = command.redirections.map((r) => `${r.op} ${r.target}`).join(" ");
  const out = new Set<string>();
  for (const words of [command.argv, command.normalized, command.original]) {
    for (const base of [words.join(" "), words.map(shown).join(" ")]) {
      out.add(base);
      if (assignments) out.add(`${assignments} ${base}`);
      if (redirections) out.add(`${base} ${redirections}`);
    }
  }
  return [...out];
}

/** Known beginnings of the command when a later word is decided at run time (the command name excepted: that is `unknown`). */
export function runTimePrefixes(command: SimpleCommandFacts): string[] {
  const first =
    command.expanded.length > 0 ? Math.min(...command.expanded) : command.openArgs ? command.argv.length : -1;
  if (first <= 0) return [];
  const known = command.argv.slice(0, first);
  // git's global options are dropped in `normalized`; it runs up to the first run-time word too.
  const runTime = new Set(command.expanded.map((i) => command.argv[i]));
  const stop = command.normalized.findIndex((word) => runTime.has(word));
  const normal = command.normalized.slice(0, stop < 0 ? command.normalized.length : stop);
  return [...new Set([`${known.join(" ")} `, `${normal.join(" ")} `])];
}

type Hit = { rule: CompiledRule; command: SimpleCommandFacts; certain: boolean };

function findHit(rule: CompiledRule, commands: readonly SimpleCommandFacts[]): Hit | undefined {
  const m = matchers(rule);
  let maybe: Hit | undefined;
  for (const command of commands) {
    if (denyCandidates(command).some((c) => m.full(c))) return { rule, command, certain: true };
    if (!maybe && runTimePrefixes(command).some((p) => m.prefix(p)))
      maybe = { rule, command, certain: false };
  }
  return maybe;
}

/** The commands a verdict is about: an empty command line is one empty command. */
function commandsOf(facts: ShellCommandFacts): readonly SimpleCommandFacts[] {
  if (facts.commands.length > 0 || facts.unknown.length > 0) return facts.commands;
  const empty: SimpleCommandFacts = {
    argv: [],
    assignments: [],
    redirections: [],
    wrappers: [],
    original: [],
    direct: true,
    expanded: [],
    openArgs: false,
    normalized: [],
    context: [],
  };
  return [empty];
}

const display = (command: SimpleCommandFacts) =>
  [...command.assignments, ...(command.wrappers.length > 0 ? command.original : command.argv)].join(" ");

/** Whether one rule, alone, matches the command line with its decision's semantics (used for examples). */
export function shellRuleMatches(rule: CompiledRule, facts: ShellCommandFacts): boolean {
  const commands = commandsOf(facts);
  if (rule.decision !== "allow") return findHit(rule, commands) !== undefined;
  if (rule.pattern === undefined) return true;
  if (facts.unknown.length > 0) return false;
  return commands.every((command) => allowCovers(rule, command));
}

/** The verdict of the applicable rules for a shell call; undefined when no rule has an opinion. */
export function evaluateShell(
  applicable: readonly CompiledRule[],
  facts: ShellCommandFacts,
): PolicyVerdict | undefined {
  const commands = commandsOf(facts);
  const hits: Hit[] = [];
  for (const rule of applicable) {
    if (rule.decision === "allow") continue;
    const hit = findHit(rule, commands);
    if (hit) hits.push(hit);
  }
  const rank = (h: Hit) => (h.rule.decision === "deny" && h.certain ? 3 : h.certain ? 2 : 1);
  const strictest = hits.reduce<Hit | undefined>(
    (best, h) => (!best || rank(h) > rank(best) ? h : best),
    undefined,
  );
  if (strictest && rank(strictest) >= 2) {
    return {
      decision: strictest.rule.decision,
      rule: strictest.rule.label,
      reason: `${strictest.rule.reason} (${strictest.rule.spec} matched ${JSON.stringify(display(strictest.command))})`,
    };
  }
  if (strictest) {
    return {
      decision: "ask",
      rule: strictest.rule.label,
      reason: `${strictest.rule.reason} (${strictest.rule.spec} may match ${JSON.stringify(display(strictest.command))}: a word is decided at run time)`,
    };
  }
  const guarding =
    applicable.find((r) => r.decision === "deny") ?? applicable.find((r) => r.decision === "ask");
  if (facts.unknown.length > 0 && guarding) {
    const what = facts.unknown.map((u) => `${u.reason}: ${JSON.stringify(u.text.slice(0, 80))}`).join("; ");
    return {
      decision: "ask",
      rule: guarding.label,
      reason: `the command could not be fully understood (${what}), so no one can prove that ${guarding.spec} does not match it`,
    };
  }
  return allowVerdict(applicable, facts, commands);
}

function allowVerdict(
  applicable: readonly CompiledRule[],
  facts: ShellCommandFacts,
  commands: readonly SimpleCommandFacts[],
): PolicyVerdict | undefined {
  const allows = applicable.filter((r) => r.decision === "allow");
  const everything = allows.find((r) => r.pattern === undefined);
  if (everything)
    return { decision: "allow", rule: everything.label, reason: `${everything.reason} (${everything.spec})` };
  if (facts.unknown.length > 0 || allows.length === 0) return undefined;
  const covering: CompiledRule[] = [];
  for (const command of commands) {
    const rule = allows.find((r) => allowCovers(r, command));
    if (!rule) return undefined;
    if (!covering.includes(rule)) covering.push(rule);
  }
  const first = covering[0] as CompiledRule;
  const others =
    covering.length > 1 ? `; every command allowed by ${covering.map((r) => r.label).join(", ")}` : "";
  return { decision: "allow", rule: first.label, reason: `${first.reason} (${first.spec}${others})` };
}
