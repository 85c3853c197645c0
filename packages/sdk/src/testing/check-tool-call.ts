/**
 * `checkToolCall`: `evaluateToolCall` for tests. Differs in one default: a tool
 * name the harness does not have throws `unknown_tool` (naming the closest
 * registered name: "did you mean write?") instead of being decided - a typo in a
 * policy test must fail the test, never pass as a deny by `harness` or an allow
 * on a stand-in. A test that means to probe an unregistered tool says so:
 * `{ unregistered: "refuse" }` (denied by `harness` as a run would) or
 * `{ unregistered: "evaluate" }` (the gates decide on a stand-in). The result
 * carries the call's `facts` (canonical `paths`, parsed `command`) so a test can
 * assert on them.
 */
import {
  type EvaluateToolCallOptions,
  evaluateToolCall,
  type HarnessLike,
  type ToolCallEvaluation,
  type ToolCallProbe,
} from "../evaluate-tool-call.js";

export function checkToolCall(
  target: HarnessLike,
  probe: ToolCallProbe,
  options: EvaluateToolCallOptions = {},
): Promise<ToolCallEvaluation> {
  return evaluateToolCall(target, probe, { unregistered: "throw", ...options });
}
