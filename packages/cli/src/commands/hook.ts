/**
 * `rein hook <agent>`: the command hook an agent (Claude Code, Codex, Gemini
 * CLI) runs on each event, with the event's JSON on stdin. It builds the
 * project's Rein stack (the config found from the agent's working directory),
 * decides, records the decision in the Rein session of the agent's session,
 * and answers in the agent's protocol (src/hook/).
 *
 * Invariant: fails closed. Input it cannot read, a config or plugin that does
 * not load, a tap that throws or times out: exit 2 with the reason on stderr,
 * which blocks the call in every agent (a failure on an event that blocks
 * nothing, such as SessionStart, is exit 1: reported, the agent goes on).
 */
import { buildAgent } from "../agent/build-agent.js";
import type { GlobalOptions } from "../globals.js";
import { failureAnswer, type OnFailure } from "../hook/agent-protocols.js";
import { reserveAnswer } from "../hook/answer-writer.js";
import { handleEvent, prepareHarness } from "../hook/handle-event.js";
import { type HookInput, parseHookInput } from "../hook/hook-input.js";
import { agentName, auditFor, onFailureOf, timeoutOf } from "../hook/hook-options.js";
import { readStdin } from "../hook/read-stdin.js";

export interface HookOptions {
  /** Milliseconds the stack may take to decide (default 20 000). */
  timeout?: string;
  /** `block` (default) or `continue`: what a hook that cannot decide does. */
  onFailure?: string;
}

export async function hookCommand(
  agentArg: string,
  options: HookOptions,
  globals: GlobalOptions,
): Promise<number> {
  const out = reserveAnswer();
  let input: HookInput | undefined;
  let onFailure: OnFailure = "block";
  try {
    onFailure = onFailureOf(options.onFailure);
    const agent = agentName(agentArg);
    const timeoutMs = timeoutOf(options.timeout, 20_000);
    input = parseHookInput(agent, await readStdin(timeoutMs));
    const built = await buildAgent({
      cwd: input.cwd || globals.cwd,
      configPath: globals.config,
      ephemeral: true,
      modelOptional: true,
    });
    try {
      prepareHarness(built.harness);
      const audit = auditFor(built.loaded);
      try {
        return out.answer(await handleEvent(built.harness, audit, input, timeoutMs, onFailure));
      } finally {
        audit?.close();
      }
    } finally {
      await built.dispose().catch(() => undefined);
    }
  } catch (error) {
    const message = (error as Error)?.message ?? String(error);
    const hint = (error as { hint?: string }).hint;
    return out.answer(failureAnswer(input?.event, hint ? `${message} (${hint})` : message, onFailure));
  }
}
