/**
 * One line per tap of a decision trail, the same wherever a trail is shown
 * (`rein check`, `rein sessions show`, the Markdown export): the hook, who
 * (`plugin[:rule]`), the answer, and the reason or the rewritten arguments.
 * A step that did not count (`consulted: false`, explain mode) says so first.
 */
import type { DecisionStep } from "@rein/harness";
import { shorten } from "./terminal.js";

const WIDTH = { hook: 13, by: 28, answer: 10 };

/** `toolGate      policy:no-push               deny       pushing to main is reviewed`. */
export function stepLine(step: DecisionStep, options: { hook?: boolean; max?: number } = {}): string {
  let detail =
    step.answer === "rewrite" ? `→ ${shorten(step.args, options.max ?? 100)}` : (step.reason ?? "");
  if (step.consulted === false) detail = `(after the deny: not consulted, ${wouldHave(step)}) ${detail}`;
  const head = `${options.hook === false ? "" : step.hook.padEnd(WIDTH.hook)}${step.by.padEnd(WIDTH.by)} ${step.answer.padEnd(WIDTH.answer)}`;
  return `${head} ${shorten(detail, options.max ?? 100)}`.trimEnd();
}

/** What a step that did not count would have done. */
function wouldHave(step: DecisionStep): string {
  if (step.answer === "no opinion") return "would have had no opinion";
  if (step.answer === "error") return "it failed";
  return `would have said ${step.answer}`;
}

export function trailLines(trail: readonly DecisionStep[]): string[] {
  return trail.map((step) => stepLine(step));
}
