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
import type { ResolvedPathFacts } from "@rein/sdk";
import type { ShellCommandFacts } from "@rein/sdk/shell";
import picomatch from "picomatch";
import { type When, whenHolds } from "./condition.js";
import { commandMatcher, type ParsedSpec, parseSpec, toolNameMatcher } from "./grammar.js";
import { factUnits, isPathScoped, pathCandidates, type Where } from "./paths.js";
import { evaluateShell, shellRuleMatches } from "./shell-rules.js";

export { commandMatcher };

export type Decision = "allow" | "ask" | "deny";

export interface RuleInput {
  id?: string;
  rule: string;
  decision: Decision;
  reason?: string;
  examples?: { match?: string[]; notMatch?: string[] };
  when?: When;
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
  readonly when?: When;
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
  /** When set, the only candidates an allow rule may match (canonical paths). */
  readonly canonical?: readonly string[];
}

export interface CallLike {
  readonly name: string;
  readonly args: Record<string, unknown>;
  /** The gate call's facts: canonical paths (path rules), the sandbox boundary (`when` conditions). */
  readonly facts?: {
    readonly paths?: readonly ResolvedPathFacts[] | undefined;
    /** Paths the arguments name though the tool declares none: deny and ask path rules only. */
    readonly mentionedPaths?: readonly ResolvedPathFacts[] | undefined;
  };
}

export type { Where };

export interface PolicyVerdict {
  decision: Decision;
  reason: string;
  rule: string;
}

export function kindOf(tool: string, kinds: ToolKinds, call?: CallLike): ToolKind {
  if (kinds.shellTools.includes(tool)) return "shell";
  if (hasPathFacts(call)) return "path";
  if (kinds.pathTools.includes(tool)) return "path";
  return "other";
}

const hasPathFacts = (call: CallLike | undefined) => (call?.facts?.paths?.length ?? 0) > 0;

/**
 * The rules that apply to a call: by tool name, plus every deny or ask rule
 * written for `read` with a path pattern when the call touches paths (its facts
 * name them): a rule about a file holds whichever tool touches it.
 */
function applicableRules(rules: readonly CompiledRule[], call: CallLike): CompiledRule[] {
  const touches = hasPathFacts(call);
  return rules.filter(
    (rule) =>
      rule.appliesTo(call.name) ||
      (touches && rule.decision !== "allow" && rule.appliesTo("read") && isPathScoped(rule)),
  );
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
    ...(input.when !== undefined ? { when: input.when } : {}),
    matchUnit(unit, kind) {
      const test = matchers[kind];
      const candidates = input.decision === "allow" && unit.canonical ? unit.canonical : unit.candidates;
      return candidates.find((candidate) => test(candidate));
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
    const facts = call.facts?.paths;
    if (facts && facts.length > 0) return factUnits(facts, where);
    const raw = call.args.path;
    const given = typeof raw === "string" && raw !== "" ? raw : ".";
    return [{ display: given, candidates: pathCandidates(given, where.root, where.cwd) }];
  }
  const strings = Object.values(call.args).filter((value): value is string => typeof value === "string");
  return [{ display: strings.join(" "), candidates: strings.length > 0 ? strings : [""] }];
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
  if (applicableRules([rule], call).length === 0) return false;
  const kind = kindOf(call.name, kinds, call);
  if (kind === "shell") return shellRuleMatches(rule, shell ?? notAnalysed(call));
  const units = unitsOf(call, kind, where);
  if (units.length === 0) return false;
  const hit = (unit: Unit) => rule.matchUnit(unit, kind) !== undefined;
  return rule.decision === "allow" ? units.every(hit) : units.some(hit);
}

/**
 * The strictest deny or ask path rule matching a path the call's arguments name
 * without being declared (`facts.mentionedPaths`): rules for the tool itself and
 * `read(...)` rules, matched as path globs on every spelling. Never an allow.
 */
function evaluateMentions(
  rules: readonly CompiledRule[],
  call: CallLike,
  where: Where,
): PolicyVerdict | undefined {
  const mentions = call.facts?.mentionedPaths;
  if (!mentions || mentions.length === 0) return undefined;
  const units = factUnits(mentions, where);
  let strictest: { rule: CompiledRule; unit: Unit } | undefined;
  for (const rule of rules) {
    if (rule.decision === "allow" || !isPathScoped(rule)) continue;
    if (!(rule.appliesTo(call.name) || rule.appliesTo("read"))) continue;
    if (!whenHolds(rule.when, call.facts)) continue;
    const unit = units.find((candidate) => rule.matchUnit(candidate, "path") !== undefined);
    if (unit === undefined) continue;
    if (!strictest || RANK[rule.decision] > RANK[strictest.rule.decision]) strictest = { rule, unit };
    if (strictest.rule.decision === "deny") break;
  }
  if (!strictest) return undefined;
  return {
    decision: strictest.rule.decision,
    rule: strictest.rule.label,
    reason: `${strictest.rule.reason} (${strictest.rule.spec} matched ${JSON.stringify(strictest.unit.display)}, a path in the arguments)`,
  };
}

/** Decides one call against every rule: strictest wins; undefined when no rule matches. */
export function evaluateRules(
  rules: readonly CompiledRule[],
  call: CallLike,
  kinds: ToolKinds,
  where: Where,
  shell?: ShellCommandFacts,
): PolicyVerdict | undefined {
  const byArgs = evaluateByArgs(rules, call, kinds, where, shell);
  if (byArgs?.decision === "deny") return byArgs;
  const byMentions = evaluateMentions(rules, call, where);
  if (byMentions === undefined) return byArgs;
  return byArgs === undefined || RANK[byMentions.decision] > RANK[byArgs.decision] ? byMentions : byArgs;
}

function evaluateByArgs(
  rules: readonly CompiledRule[],
  call: CallLike,
  kinds: ToolKinds,
  where: Where,
  shell?: ShellCommandFacts,
): PolicyVerdict | undefined {
  const applicable = applicableRules(rules, call).filter((rule) => whenHolds(rule.when, call.facts));
  if (applicable.length === 0) return undefined;
  const kind = kindOf(call.name, kinds, call);
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
