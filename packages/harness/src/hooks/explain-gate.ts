/**
 * Explain mode for the tool gate (`rein check`; `evaluateToolCall` and
 * `decideToolCall` with `explainAfterDeny`): after the deciding deny, the
 * `toolGate` taps after it are still asked, so an author sees what each would
 * have said. They are asked through `callTap`, like any tap - under their own
 * deadline and the run's signal, failures tagged with plugin and hook and
 * reported as in a run - and their steps join the trail with `consulted: false`.
 *
 * Invariants: nothing here returns or changes a verdict (the decision is made
 * before this runs); only a trail registered with `explainDenials` is ever
 * continued, and a run never registers one, so "a deny stops the remaining
 * taps" holds for every real call. The taps asked here run against whatever
 * the decision ran on: for `rein check` the throwaway check session.
 */
import { describeError } from "../errors.js";
import type { DecisionStep } from "../session/entries.js";
import type { HarnessHooks } from "./hook-table.js";
import type { ToolGateCall, ToolHookContext } from "./hook-types.js";
import { isThenable } from "./plugin-driver.js";
import { callTap, keepDenial, keptDenial, type RawTap, type TapCall } from "./tap-call.js";

/** Marks `trail` for explain mode: its gate keeps the deciding deny for `askAfterDeny`. */
export function explainDenials(trail: DecisionStep[]): void {
  keepDenial(trail);
}

/**
 * Asks the `toolGate` taps after the one whose deny decided, in order, and
 * appends their steps to `trail` marked `consulted: false`. Does nothing when
 * no tap denied (a default deny, a refusal before the gate, an abort).
 */
export async function askAfterDeny(
  hooks: HarnessHooks,
  trail: DecisionStep[],
  gateCall: ToolGateCall,
  context: ToolHookContext,
): Promise<void> {
  const denial = keptDenial(trail);
  if (!denial) return;
  const taps = (hooks.toolGate as unknown as { taps: RawTap[] }).taps;
  const at = taps.indexOf(denial.tap);
  if (at < 0) return; // the denying tap was removed meanwhile: "after it" no longer means anything
  const asked: DecisionStep[] = [];
  // A fresh reduction: what these taps say cannot reach the decided verdict.
  const call: TapCall = { ...denial.call, gate: {}, trail: asked };
  for (const tap of taps.slice(at + 1)) {
    const before = asked.length;
    try {
      const answer = callTap(call, tap, gateCall, context);
      if (isThenable(answer)) await answer;
    } catch (error) {
      // A gate fails closed, so callTap does not throw for a tap's failure; anything else still leaves a step.
      if (asked.length === before)
        asked.push({ hook: "toolGate", by: tap.name, answer: "error", reason: describeError(error) });
    }
  }
  for (const step of asked) trail.push({ ...step, consulted: false });
}
