/**
 * The trail a recorded decision carries (`DecisionRecord.trail`), read defensively:
 * sessions without trails, and sessions from a harness that did not write them,
 * simply have none; a malformed step is dropped rather than shown.
 */
import type { DecisionRecord, DecisionStep } from "@rein/harness";

export type { DecisionStep };

/** The trail a decision carries, if any. */
export const trailOf = (decision: DecisionRecord | undefined): DecisionStep[] | undefined => {
  const trail: unknown = decision?.trail;
  if (!Array.isArray(trail)) return undefined;
  return trail.filter((step): step is DecisionStep => typeof step === "object" && step !== null);
};
