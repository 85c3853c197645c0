/**
 * One line per tap of a decision trail, the same wherever a trail is shown
 * (`rein check`, `rein sessions show`, the Markdown export): the hook, who
 * (`plugin[:rule]`), the answer, and the reason or the rewritten arguments.
 */
import type { DecisionStep } from "@rein/harness";
import { shorten } from "./terminal.js";

const WIDTH = { hook: 13, by: 28, answer: 10 };

/** `toolGate      policy:no-push               deny       pushing to main is reviewed`. */
export function stepLine(step: DecisionStep, options: { hook?: boolean; max?: number } = {}): string {
  const detail =
    step.answer === "rewrite" ? `→ ${shorten(step.args, options.max ?? 100)}` : (step.reason ?? "");
  const head = `${options.hook === false ? "" : step.hook.padEnd(WIDTH.hook)}${step.by.padEnd(WIDTH.by)} ${step.answer.padEnd(WIDTH.answer)}`;
  return `${head} ${shorten(detail, options.max ?? 100)}`.trimEnd();
}

export function trailLines(trail: readonly DecisionStep[]): string[] {
  return trail.map((step) => stepLine(step));
}
