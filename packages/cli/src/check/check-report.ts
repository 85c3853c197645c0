/**
 * `rein check`'s text output: the call, then each hook's taps in order (with
 * the facts the gates saw between `toolCall` and `toolGate`), what
 * `permissionAsk` is asked, and the result. stdout carries all of it (it is the
 * answer); colours only on a terminal.
 */
import type { DecisionStep, ToolCallFacts } from "@rein/harness";
import { stepLine } from "../ui/decision-trail.js";
import { shorten, type Terminal } from "../ui/terminal.js";

/** What `rein check` found about one call: printed by renderCheck, or as JSON. */
export interface CheckReport {
  tool: { name: string; risk: string | null; owner: string | null; active: boolean; primary: string | null };
  /** The arguments as given (the shorthand's text in the primary parameter). */
  input: Record<string, unknown>;
  decision: "allow" | "deny" | "ask";
  by: string;
  reason: string;
  askedBy?: string;
  /** The arguments after `toolCall` rewrites: what the gates saw and the tool would get. */
  args: Record<string, unknown>;
  /**
   * Every tap that ran, in order. Gate taps after the deciding deny are asked
   * too (explain mode): their steps carry `consulted: false` and never count.
   */
  trail: DecisionStep[];
  /**
   * `toolGate` taps a run would not consult: a deny came first (they are in the
   * trail as `consulted: false`) or the call was refused before the gate (they
   * did not run at all).
   */
  notConsulted: string[];
  /** What the tool's `inspect` resolved: canonical `paths`, a parsed `command`. */
  facts: Readonly<ToolCallFacts>;
  /** For an ask: who asks, why, and the `permissionAsk` taps it goes to; `answered` when they ran. */
  ask: { by: string; reason: string; taps: string[]; answered: boolean } | null;
  exitCode: number;
}

export function renderCheck(report: CheckReport, term: Terminal): void {
  const { co } = term;
  const lines: string[] = [];
  const { tool } = report;
  const about = [
    `risk ${tool.risk ?? "-"}`,
    tool.owner ? `from ${tool.owner}` : "",
    tool.active ? "" : "inactive",
  ];
  lines.push(
    `${co.bold(tool.name)} ${shorten(report.input, 200)}  ${co.dim(about.filter(Boolean).join(", "))}`,
  );
  if (!tool.active) {
    lines.push(
      co.yellow("  inactive: a run does not offer this tool, and refuses a call to it before any tap"),
    );
    lines.push("", `${co.bold(co.red("DENY"))} by ${report.by}: ${report.reason}`);
    term.out.write(`${lines.join("\n")}\n`);
    return;
  }

  lines.push("", co.bold("toolCall"));
  section(lines, report, "toolCall", "no toolCall taps");

  lines.push("", co.bold("facts the gates saw"));
  lines.push(...factLines(report.facts));
  if (report.trail.some((step) => step.answer === "rewrite"))
    lines.push(`  args     ${shorten(report.args, 200)}`);

  lines.push("", co.bold("toolGate"));
  // Taps that never ran are named below, not called missing.
  section(lines, report, "toolGate", report.notConsulted.length > 0 ? undefined : "no toolGate taps");
  if (report.notConsulted.length > 0) {
    const asked = report.trail.some((step) => step.consulted === false);
    const why = asked
      ? "a deny stops the remaining taps; they were asked here only to show their answers"
      : report.trail.some((step) => step.hook === "toolGate")
        ? "a deny stops the remaining taps"
        : "the call was refused before the gate";
    lines.push(co.dim(`  not consulted: ${report.notConsulted.join(", ")} (${why})`));
  }

  lines.push("", co.bold("permissionAsk"));
  if (!report.ask) lines.push(co.dim("  not asked (the gate did not say ask)"));
  else {
    lines.push(`  asks: ${report.ask.reason} (asked by ${report.ask.by})`);
    const taps =
      report.ask.taps.length > 0 ? report.ask.taps.join(", ") : "none (an unanswered ask is denied)";
    lines.push(`  would be put to: ${taps}`);
    if (report.ask.answered) section(lines, report, "permissionAsk", "no tap answered");
    else lines.push(co.dim("  not answered: no terminal (or --json); a run would ask here"));
  }

  const verdict = report.decision.toUpperCase();
  const colour = report.decision === "allow" ? co.green : report.decision === "deny" ? co.red : co.yellow;
  lines.push("", `${co.bold(colour(verdict))} by ${report.by}: ${report.reason}`);
  if (report.askedBy) lines.push(co.dim(`  asked by ${report.askedBy}`));
  term.out.write(`${lines.join("\n")}\n`);
}

function section(lines: string[], report: CheckReport, hook: string, empty: string | undefined): void {
  const steps = report.trail.filter((step) => step.hook === hook);
  if (steps.length === 0 && empty !== undefined) lines.push(`  ${empty}`);
  for (const step of steps) lines.push(`  ${stepLine(step, { hook: false, max: 120 })}`);
}

/** Canonical paths and the parsed command, as the gates got them. */
function factLines(facts: Readonly<ToolCallFacts>): string[] {
  const lines: string[] = [];
  for (const path of facts.paths ?? []) {
    const place = path.inside ? "inside the tool root" : "OUTSIDE the tool root";
    lines.push(
      `  path     ${path.arg} ${JSON.stringify(path.input)} → ${path.absolute} (${path.relative}; ${place})`,
    );
  }
  const command = facts.command;
  if (command) {
    lines.push(`  command  ${shorten(command.source, 200)}`);
    for (const simple of command.commands) {
      const wrappers = simple.wrappers.length > 0 ? ` (via ${simple.wrappers.join(" ")})` : "";
      lines.push(`    argv   ${JSON.stringify(simple.argv)}${wrappers}`);
    }
    for (const unknown of command.unknown)
      lines.push(`    unresolved  ${unknown.reason}: ${shorten(unknown.text, 80)}`);
    if (command.unknown.length === 0) lines.push("    fully understood");
  }
  const others = Object.keys(facts).filter((key) => key !== "paths" && key !== "command");
  for (const key of others)
    lines.push(`  ${key.padEnd(8)} ${shorten((facts as Record<string, unknown>)[key], 200)}`);
  if (lines.length === 0) lines.push("  none (the tool has no inspect)");
  return lines;
}
