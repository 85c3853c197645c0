/**
 * `rein hook <agent>`: the command hook an agent (Claude Code, Codex, Gemini
 * CLI) runs on each event, with the event's JSON on stdin. It builds the
 * project's Rein stack (the config found from the agent's working directory,
 * or the pinned project's when that directory left it: hook/pinned-project.ts),
 * decides, records the decision in the Rein session of the agent's session,
 * and answers in the agent's protocol (src/hook/).
 *
 * Invariant: fails closed. Input it cannot read, a config or plugin that does
 * not load, a tap that throws or times out: exit 2 with the reason on stderr,
 * which blocks the call in every agent (a failure on an event that blocks
 * nothing, such as SessionStart, is exit 1: reported, the agent goes on).
 */
import { type Agent, buildAgent } from "../agent/build-agent.js";
import type { GlobalOptions } from "../globals.js";
import { type AgentName, failureAnswer, type HookAnswer, type OnFailure } from "../hook/agent-protocols.js";
import { reserveAnswer } from "../hook/answer-writer.js";
import { handleEvent, prepareHarness } from "../hook/handle-event.js";
import type { AuditWriter } from "../hook/hook-audit.js";
import { type HookInput, parseHookInput } from "../hook/hook-input.js";
import { agentName, auditFor, onFailureOf, timeoutOf } from "../hook/hook-options.js";
import { configSearchDir, pinnedProject } from "../hook/pinned-project.js";
import { readStdin } from "../hook/read-stdin.js";

export interface HookOptions {
  /** Milliseconds the stack may take to decide (default 20 000). */
  timeout?: string;
  /** `block` (default) or `continue`: what a hook that cannot decide does. */
  onFailure?: string;
  /** The project whose stack decides wherever the agent's cwd is (hook/pinned-project.ts). */
  project?: string;
}

/** The options of one `rein hook <agent>` command line, checked (a bad one throws a usage error). */
export interface HookSettings {
  agent: AgentName;
  timeoutMs: number;
  onFailure: OnFailure;
  /** The pinned project (absolute), or undefined: the event's cwd finds the config. */
  project: string | undefined;
}

export function hookSettings(
  agentArg: string,
  options: HookOptions,
  env: NodeJS.ProcessEnv = process.env,
): HookSettings {
  const onFailure = onFailureOf(options.onFailure);
  const agent = agentName(agentArg);
  const timeoutMs = timeoutOf(options.timeout, 20_000);
  return { onFailure, agent, timeoutMs, project: pinnedProject(agent, options.project, env) };
}

/** The answer to a failure before or around the decision: the reason (and hint), fail closed. */
export function failureFrom(input: HookInput | undefined, error: unknown, onFailure: OnFailure): HookAnswer {
  const message = (error as Error)?.message ?? String(error);
  const hint = (error as { hint?: string }).hint;
  return failureAnswer(input?.event, hint ? `${message} (${hint})` : message, onFailure);
}

/**
 * One event decided on a built stack and recorded in its Rein session: opened,
 * fsynced and closed for this event (a process per event), or, given a
 * long-lived `audit` (the hook daemon's, which keeps sessions open), written
 * to it. Shared by this command and the hook daemon (hook/hook-daemon.ts): one
 * decision path.
 */
export async function decideOnStack(
  built: Agent,
  input: HookInput,
  settings: HookSettings,
  audit?: AuditWriter,
): Promise<HookAnswer> {
  const writer = audit ?? auditFor(built.loaded);
  try {
    return await handleEvent(built.harness, writer, input, settings.timeoutMs, settings.onFailure);
  } finally {
    if (audit === undefined) writer?.close();
  }
}

/**
 * The stack a hook decides with: the config found from the event's working
 * directory, or from the pinned project when that directory left it (paths are
 * still resolved against the event's directory: it is the harness's cwd).
 */
export async function buildHookStack(
  cwd: string,
  globals: GlobalOptions,
  project: string | undefined,
): Promise<Agent> {
  const built = await buildAgent({
    cwd,
    configCwd: configSearchDir(project, cwd),
    configPath: globals.config,
    ephemeral: true,
    modelOptional: true,
  });
  try {
    prepareHarness(built.harness);
  } catch (error) {
    await built.dispose().catch(() => undefined);
    throw error;
  }
  return built;
}

type Capture = (agentArg: string, options: HookOptions, globals: GlobalOptions) => void;
let capture: Capture | undefined;

/** The hook daemon parses its command line with the CLI's own program: the parsed command lands here. */
export function captureHookCommand(receive: Capture): void {
  capture = receive;
}

export async function hookCommand(
  agentArg: string,
  options: HookOptions,
  globals: GlobalOptions,
): Promise<number> {
  if (capture) {
    capture(agentArg, options, globals);
    return 0;
  }
  const out = reserveAnswer();
  let input: HookInput | undefined;
  let onFailure: OnFailure = "block";
  try {
    onFailure = onFailureOf(options.onFailure);
    const settings = hookSettings(agentArg, options);
    input = parseHookInput(settings.agent, await readStdin(settings.timeoutMs));
    const built = await buildHookStack(input.cwd || globals.cwd, globals, settings.project);
    try {
      return out.answer(await decideOnStack(built, input, settings));
    } finally {
      await built.dispose().catch(() => undefined);
    }
  } catch (error) {
    return out.answer(failureFrom(input, error, onFailure));
  }
}
