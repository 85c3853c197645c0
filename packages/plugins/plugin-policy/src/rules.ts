/**
 * Compiling rules and deciding one call.
 *
 * A call is turned into *units*: one path for a path tool, one unit holding every
 * string argument for any other tool. Each unit has candidate strings (a path
 * relative to the root and absolute), and a rule matches a unit when its pattern
 * matches any candidate. Shell tools are decided over the parsed command instead
 * (shell-rules.ts), with the same combination rules.
 *
 * Invariants:
 * - deny and ask rules match a call when they match ANY unit; an allow rule
 *   counts only when EVERY unit is matched by some allow rule, so an allowed
 *   `git status` never carries an unmatched `&& rm -rf ~` through;
 * - strictest wins (deny > ask > allow); between rules of the same decision the
 *   earlier rule is reported;
 * - no matching rule means no opinion: the harness default (or another plugin) decides.
 */
import path from "node:path";
import type { ShellCommandFacts } from "@rein/sdk/shell";
import picomatch from "picomatch";
import { commandMatcher, type ParsedSpec, parseSpec, toolNameMatcher } from "./grammar.js";
import { evaluateShell, shellRuleMatches } from "./shell-rules.js";

export { commandMatcher };

export type Decision = "allow" | "ask" | "deny";

export interface RuleInput {
  id?: string;
  rule: string;
  decision: Decision;
  reason?: string;
  examples?: { match?: string[]; notMatch?: string[] };
}

export interface ToolKinds {
  /** Tools whose `path` argument is matched as a path glob. */
  pathTools: readonly string[];
  /** Tools whose `command` argument is split and matched as shell commands. */
  shellTools: readonly string[];
}

export interface CompiledRule {
  /** `id`, or `rules[<index>]`: the `rule` of the verdict, so `by` reads `policy:<label>`. */
  readonly label: string;
  readonly index: number;
  readonly spec: string;
  readonly decision: Decision;
  readonly reason: string;
  /** The pattern between the parentheses; undefined for `tool`, `tool(*)`, `tool(**)` (every call). */
  readonly pattern: string | undefined;
  appliesTo(tool: string): boolean;
  /** Which candidate of the unit matched, or undefined. */
  matchUnit(unit: Unit, kind: ToolKind): string | undefined;
}

export type ToolKind = "path" | "shell" | "other";

/** One thing a rule is checked against: its candidate strings and a display form. */
export interface Unit {
  readonly display: string;
  readonly candidates: readonly string[];
}

export interface CallLike {
  readonly name: string;
  readonly args: Record<string, unknown>;
}

export interface PolicyVerdict {
  decision: Decision;
  reason: string;
  rule: string;
}

export function kindOf(tool: string, kinds: ToolKinds): ToolKind {
  if (kinds.shellTools.includes(tool)) return "shell";
  if (kinds.pathTools.includes(tool)) return "path";
  return "other";
}

/** Compiles one rule; returns a problem description instead for a malformed rule. */
export function compileRule(input: RuleInput, index: number): CompiledRule | string {
  const parsed = parseSpec(input.rule);
  if (typeof parsed === "string") return parsed;
  const label = input.id ?? `rules[${index}]`;
  const matchers = patternMatchers(parsed);
  if (typeof matchers === "string") return matchers;
  const appliesTo = toolNameMatcher(parsed.tool);
  return {
    label,
    index,
    spec: input.rule,
    decision: input.decision,
    pattern: everyCall(parsed) ? undefined : parsed.pattern?.trim(),
    reason: input.reason ?? `${input.decision} by rule ${input.rule}`,
    appliesTo,
    matchUnit(unit, kind) {
      const test = matchers[kind];
      return unit.candidates.find((candidate) => test(candidate));
    },
  };
}

type Tester = (candidate: string) => boolean;

function everyCall(parsed: ParsedSpec): boolean {
  const pattern = parsed.pattern?.trim();
  return pattern === undefined || pattern === "" || pattern === "*" || pattern === "**";
}

/** Per tool kind: a glob for path tools, a command pattern for shell tools, a wildcard over string arguments otherwise. */
function patternMatchers(parsed: ParsedSpec): Record<ToolKind, Tester> | string {
  const pattern = parsed.pattern?.trim();
  if (pattern === undefined || everyCall(parsed)) {
    const any = () => true;
    return { path: any, shell: any, other: any };
  }
  let glob: Tester;
  try {
    glob = picomatch(normalisePattern(pattern), { dot: true });
  } catch (error) {
    return `pattern ${JSON.stringify(pattern)} is not a valid glob: ${(error as Error).message}`;
  }
  const command = commandMatcher(pattern);
  return { path: glob, shell: command, other: command };
}

/** `./src/**` and `src/**` are the same pattern. */
function normalisePattern(pattern: string): string {
  let normal = pattern;
  while (normal.startsWith("./")) normal = normal.slice(2);
  return normal;
}

/** The units of a call (see the module comment). */
export function unitsOf(call: CallLike, kind: ToolKind, where: Where): Unit[] {
  if (kind === "path") {
    const raw = call.args.path;
    const given = typeof raw === "string" && raw !== "" ? raw : ".";
    return [{ display: given, candidates: pathCandidates(given, where.root, where.cwd) }];
  }
  const strings = Object.values(call.args).filter((value): value is string => typeof value === "string");
  return [{ display: strings.join(" "), candidates: strings.length > 0 ? strings : [""] }];
}

/** Where paths are resolved (`cwd`, as tools do) and what they are matched relative to (`root`). */
export interface Where {
  readonly cwd: string;
  readonly root: string;
}

/**
 * A path (resolved against `cwd`, like the tools resolve it) relative to the root
 * (`src/a.ts`, `.` for the root itself; `..` segments resolved) when it lies inside
 * the root, and always the absolute path, with `/` separators. With root = cwd,
 * `./src/a.ts`, `src/a.ts` and `<root>/src/a.ts` all give `src/a.ts`.
 */
export function pathCandidates(given: string, root: string, cwd: string = root): string[] {
  const absolute = path.resolve(cwd, given);
  const relative = path.relative(root, absolute);
  const slash = (p: string) => p.split(path.sep).join("/");
  const candidates: string[] = [];
  if (relative === "") candidates.push(".");
  else if (!relative.startsWith("..") && !path.isAbsolute(relative)) candidates.push(slash(relative));
  candidates.push(slash(absolute));
  return candidates;
}

const RANK: Record<Decision, number> = { allow: 1, ask: 2, deny: 3 };

/** Whether a single rule matches a call under its own decision's semantics (used for examples). */
export function ruleMatches(
  rule: CompiledRule,
  call: CallLike,
  kinds: ToolKinds,
  where: Where,
  shell?: ShellCommandFacts,
): boolean {
  if (!rule.appliesTo(call.name)) return false;
  const kind = kindOf(call.name, kinds);
  if (kind === "shell") return shellRuleMatches(rule, shell ?? notAnalysed(call));
  const units = unitsOf(call, kind, where);
  if (units.length === 0) return false;
  const hit = (unit: Unit) => rule.matchUnit(unit, kind) !== undefined;
  return rule.decision === "allow" ? units.every(hit) : units.some(hit);
}

/** Decides one call against every rule: strictest wins; undefined when no rule matches. */
export function evaluateRules(
  rules: readonly CompiledRule[],
  call: CallLike,
  kinds: ToolKinds,
  where: Where,
  shell?: ShellCommandFacts,
): PolicyVerdict | undefined {
  const applicable = rules.filter((rule) => rule.appliesTo(call.name));
  if (applicable.length === 0) return undefined;
  const kind = kindOf(call.name, kinds);
  if (kind === "shell") return evaluateShell(applicable, shell ?? notAnalysed(call));
  const units = unitsOf(call, kind, where);
  if (units.length === 0) return undefined;

  let strictest: { rule: CompiledRule; unit: Unit; candidate: string } | undefined;
  for (const rule of applicable) {
    if (rule.decision === "allow") continue;
    for (const unit of units) {
      const candidate = rule.matchUnit(unit, kind);
      if (candidate === undefined) continue;
      if (!strictest || RANK[rule.decision] > RANK[strictest.rule.decision]) {
        strictest = { rule, unit, candidate };
      }
      break;
    }
    if (strictest?.rule.decision === "deny") break;
  }
  if (strictest) {
    return {
      decision: strictest.rule.decision,
      rule: strictest.rule.label,
      reason: `${strictest.rule.reason} (${strictest.rule.spec} matched ${JSON.stringify(strictest.unit.display)})`,
    };
  }

  // Allow only when every unit is covered by some allow rule.
  const covering: CompiledRule[] = [];
  for (const unit of units) {
    const rule = applicable.find((r) => r.decision === "allow" && r.matchUnit(unit, kind) !== undefined);
    if (!rule) return undefined;
    if (!covering.includes(rule)) covering.push(rule);
  }
  const first = covering[0] as CompiledRule;
  const others =
    covering.length > 1 ? `; every part allowed by ${covering.map((r) => r.label).join(", ")}` : "";
  return { decision: "allow", rule: first.label, reason: `${first.reason} (${first.spec}${others})` };
}

/** A shell call decided without its analysis: nothing is understood (fail closed). */
function notAnalysed(call: CallLike): ShellCommandFacts {
  const source = typeof call.args.command === "string" ? call.args.command : "";
  return { source, commands: [], unknown: [{ reason: "the command was not analysed", text: source }] };
}
