/**
 * One tap's answer in a decision's trail, as `DecisionRecord.trail` records it
 * (issue 22's shared contract, owned by `rein check`'s trail collection). Read
 * structurally here: sessions without trails, and sessions from a harness that
 * does not yet write them, simply have none.
 */
import type { DecisionRecord } from "@rein/harness";

export interface DecisionStep {
  hook: "toolCall" | "toolGate" | "permissionAsk";
  /** `<plugin>[:<rule>]` */
  by: string;
  answer: "no opinion" | "allow" | "deny" | "ask" | "rewrite" | "error";
  reason?: string;
  /** The rewritten arguments, for answer `rewrite`. */
  args?: unknown;
  /** `false`: an explain-mode step that did not count (`rein check` only; never recorded by a run). */
  consulted?: false;
}

/** The trail a decision carries, if any. */
export const trailOf = (decision: DecisionRecord | undefined): DecisionStep[] | undefined => {
  const trail = (decision as { trail?: unknown } | undefined)?.trail;
  if (!Array.isArray(trail)) return undefined;
  return trail.filter((step): step is DecisionStep => typeof step === "object" && step !== null);
};
