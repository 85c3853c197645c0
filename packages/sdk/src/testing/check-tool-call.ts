/**
 * `checkToolCall`: `evaluateToolCall` for tests. Differs in one default: a tool
 * name the harness does not have is denied by `harness` ("unknown tool"), as a
 * run would, instead of being evaluated on a stand-in - a typo in a policy test
 * must fail, never pass as an allow. The result carries the call's `facts`
 * (canonical `paths`, parsed `command`) so a test can assert on them.
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
  return evaluateToolCall(target, probe, { unregistered: "refuse", ...options });
}
