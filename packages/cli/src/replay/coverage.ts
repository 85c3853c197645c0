/**
 * Policy coverage (`rein replay --coverage`): over any number of replayed
 * sessions, how often each rule the stack declares decided a call, the rules
 * that never did, the deciders that declare no rules, and the calls no rule
 * matched (decided by a default verdict).
 *
 * A hit is a tap's answer other than "no opinion" naming the rule: from the
 * decision trail when the replayed decision carries one (so a rule that matched
 * but lost to a stricter one still counts), else the gate's decider (`by`, or
 * `askedBy` for an ask). Invariant: every declared rule is listed, hit or not,
 * in the stack's order; counts are exact integers, never sampled.
 */
import type { ReplayLine } from "../commands/replay.js";

export const DEFAULT_DECIDER = "harness:default";

export interface RuleHits {
  rule: string;
  hits: number;
}

export interface DefaultedCall {
  session: string;
  toolCallId: string;
  tool: string;
  args: unknown;
  /** The default's verdict (an `ask` then went to `permissionAsk`). */
  decision: "allow" | "ask" | "deny";
}

export interface CoverageReport {
  sessions: number;
  calls: number;
  /** Every declared rule, in the stack's order, with its hits (0 included). */
  rules: RuleHits[];
  /** Declared rules with no hit. */
  neverMatched: string[];
  /** Deciders that are not declared rules (plugins without `rules`, the harness), most hits first. */
  otherDeciders: RuleHits[];
  /** Calls no rule matched: the default verdict decided them. */
  byDefault: DefaultedCall[];
  /** Recorded calls the replay did not reach (a run stopped earlier than recorded). */
  notReached: number;
}

export interface ReplayedSession {
  session: string;
  lines: readonly ReplayLine[];
}

/** Who answered, per the trail (answers other than "no opinion" and "error"), else the gate's decider. */
function decidersOf(line: ReplayLine): string[] {
  const answered = (line.trail ?? []).filter(
    (step) => step.answer !== "no opinion" && step.answer !== "error",
  );
  const deciders = answered.map((step) => step.by);
  // A child agent's decision names the agent after the rule: the rule is the same one.
  const suffix = line.agent === undefined ? "" : ` in ${line.agent}`;
  const by = suffix !== "" && line.by.endsWith(suffix) ? line.by.slice(0, -suffix.length) : line.by;
  // A default is no tap: the trail may not name it.
  if (!deciders.includes(by)) deciders.push(by);
  return deciders;
}

export function coverageOf(
  declared: readonly string[],
  sessions: readonly ReplayedSession[],
): CoverageReport {
  const hits = new Map<string, number>(declared.map((rule) => [rule, 0]));
  const others = new Map<string, number>();
  const byDefault: DefaultedCall[] = [];
  let calls = 0;
  let notReached = 0;
  for (const { session, lines } of sessions) {
    for (const line of lines) {
      calls++;
      if (line.now === "not reached" || line.now === "unknown") {
        notReached++;
        continue;
      }
      for (const decider of decidersOf(line)) {
        const table = hits.has(decider) ? hits : others;
        table.set(decider, (table.get(decider) ?? 0) + 1);
      }
      if (line.by === DEFAULT_DECIDER || line.by.startsWith(`${DEFAULT_DECIDER} in `)) {
        byDefault.push({
          session,
          toolCallId: line.toolCallId,
          tool: line.tool,
          args: line.args,
          decision: line.now,
        });
      }
    }
  }
  const rules = declared.map((rule) => ({ rule, hits: hits.get(rule) ?? 0 }));
  return {
    sessions: sessions.length,
    calls,
    rules,
    neverMatched: rules.filter((rule) => rule.hits === 0).map((rule) => rule.rule),
    otherDeciders: [...others]
      .map(([rule, count]) => ({ rule, hits: count }))
      .sort((a, b) => b.hits - a.hits || a.rule.localeCompare(b.rule)),
    byDefault,
    notReached,
  };
}

/** The report as text: rules with hits, never matched, other deciders, defaulted calls. */
export function coverageText(
  report: CoverageReport,
  shorten: (value: unknown, max: number) => string,
): string {
  const out: string[] = [];
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  out.push(
    `Policy coverage over ${plural(report.sessions, "session")}, ${plural(report.calls, "tool call")}`,
  );
  const width = Math.max(1, ...[...report.rules, ...report.otherDeciders].map((r) => String(r.hits).length));
  const row = (r: RuleHits) => `  ${String(r.hits).padStart(width)}  ${r.rule}`;
  out.push("", "Rules (hits):");
  if (report.rules.length === 0) out.push("  (the stack declares no rules)");
  for (const rule of report.rules) out.push(`${row(rule)}${rule.hits === 0 ? "   never matched" : ""}`);
  out.push(
    "",
    `Never matched: ${report.neverMatched.length === 0 ? "none" : report.neverMatched.join(", ")}`,
  );
  if (report.otherDeciders.length > 0) {
    out.push("", "Other deciders (no declared rules):");
    for (const decider of report.otherDeciders) out.push(row(decider));
  }
  out.push("", `Decided by a default (no rule matched): ${plural(report.byDefault.length, "call")}`);
  for (const call of report.byDefault) {
    out.push(`  ${call.session.slice(0, 8)} ${call.tool} ${shorten(call.args, 60)} → ${call.decision}`);
  }
  if (report.notReached > 0) out.push("", `Not reached in the replay: ${plural(report.notReached, "call")}`);
  return `${out.join("\n")}\n`;
}
