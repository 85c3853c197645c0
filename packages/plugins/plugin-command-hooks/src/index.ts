/**
 * @rein/plugin-command-hooks: hooks written for Claude Code, Codex or Gemini
 * CLI, run inside Rein. The same `hooks` JSON (inline, or read from an agent
 * settings file), the same input on stdin (Rein's calls in Claude Code's tool
 * names and fields, agent-shapes.ts), their answers on Rein's hooks:
 *
 * - `PreToolUse` -> `toolCall` + `toolGate`: the handlers run once per call in
 *   `toolCall` (so an `updatedInput` is a rewrite the harness validates again),
 *   and their verdict (deny / ask / allow, exit 2 = deny) is the gate's answer
 *   for that call, `by: "command-hooks:<event>"`;
 * - `PostToolUse` -> `toolResult`: `updatedToolOutput` replaces the result,
 *   `additionalContext` and a block's reason are added to it;
 * - `UserPromptSubmit` -> `beforeRun`: a block stops the run, context is added
 *   to the prompt;
 * - `Stop` -> `beforeStop`: a block (`decision: "block"`, exit 2) asks for one
 *   more turn with the reason as the instruction.
 *
 * Invariant: a handler that crashes (exit other than 0 / 2, a signal), hangs
 * past its timeout, or answers what is not JSON blocks by default
 * (`onFailure: "block"`): the call is denied, the prompt refused, the result
 * replaced by the failure; `"continue"` lets the moment go on (the failure is
 * logged).
 */
import { resolve } from "node:path";
import { definePlugin, type Static, Type } from "@rein/sdk";
import { fromAgentInput, toAgentCall } from "./agent-shapes.js";
import { type Folded, fold } from "./answers.js";
import { invalidUpdate, isCommandHookError } from "./errors.js";
import { handlerName, runHandler } from "./run-handler.js";
import { type CommandHookEvent, type HookTable, hookTable, matching, readSettingsFile } from "./settings.js";

export { agentToolName, fromAgentInput, toAgentCall } from "./agent-shapes.js";
export {
  CommandHookError,
  CommandHookErrorCode,
  isCommandHookError,
} from "./errors.js";
export { EVENTS, hookTable, readSettingsFile } from "./settings.js";

export const CommandHooksOptions = Type.Object(
  {
    /** The agents' `hooks` object: `{ "<Event>": [{ matcher?, hooks: [{ type, command | url, timeout? }] }] }`. */
    hooks: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** An agent settings file to read `hooks` from (relative to the working directory), after `hooks`. */
    settingsFile: Type.Optional(Type.String({ minLength: 1 })),
    /** Seconds a handler may take when its entry gives no `timeout` (Claude Code's default: 60). */
    timeout: Type.Number({ exclusiveMinimum: 0, default: 60 }),
    /** A handler that crashes, times out or answers badly: `block` (default) or `continue`. */
    onFailure: Type.Union([Type.Literal("block"), Type.Literal("continue")], { default: "block" }),
  },
  { additionalProperties: false },
);
export type CommandHooksOptions = Static<typeof CommandHooksOptions>;

/** A handler's failure, by default fatal to the moment it guards. */
interface Run {
  folded: Folded;
  failure?: string;
}

export default definePlugin({
  name: "command-hooks",
  description:
    "Runs Claude Code / Codex / Gemini CLI hook handlers (command, http) on Rein's hooks; fails closed.",
  options: CommandHooksOptions,
  setup(rein, options) {
    const cwd = rein.config.cwd;
    let table: HookTable = options.hooks ? hookTable(options.hooks, "the hooks option") : {};
    if (options.settingsFile) {
      const fromFile = readSettingsFile(resolve(cwd, options.settingsFile));
      for (const [event, groups] of Object.entries(fromFile))
        table = { ...table, [event]: [...(table[event] ?? []), ...groups] };
    }
    const sessionId = () => rein.session.id;
    const base = (event: CommandHookEvent) => ({
      session_id: sessionId(),
      transcript_path: "",
      cwd,
      permission_mode: "default",
      hook_event_name: event,
    });

    async function run(
      event: CommandHookEvent,
      input: Record<string, unknown>,
      toolName?: string,
    ): Promise<Run> {
      const handlers = matching(table, event, toolName);
      if (handlers.length === 0) return { folded: { context: [] } };
      const settled = await Promise.allSettled(
        handlers.map(async (handler) => ({
          name: handlerName(handler),
          outcome: await runHandler(event, handler, input, cwd, options.timeout),
        })),
      );
      const outcomes = settled.flatMap((one) => (one.status === "fulfilled" ? [one.value] : []));
      const failed = settled.find((one) => one.status === "rejected");
      const folded = fold(outcomes, event === "UserPromptSubmit");
      if (!failed) return { folded };
      const error = (failed as PromiseRejectedResult).reason;
      const message = isCommandHookError(error) ? error.message : String(error);
      if (options.onFailure === "continue") {
        rein.logger.warn(`${message} (onFailure: continue)`);
        return { folded };
      }
      return { folded, failure: message };
    }

    // One PreToolUse run per call: `toolCall` runs it (and applies updatedInput), `toolGate` answers with it.
    const verdicts = new Map<string, Run>();
    const tapOptions = { name: "command-hooks", timeout: options.timeout * 1000 + 5_000 };

    if (table.PreToolUse) {
      rein.hooks.toolCall.tapPromise(tapOptions, async (call) => {
        const agent = toAgentCall(call.name, call.args, cwd);
        const result = await run(
          "PreToolUse",
          {
            ...base("PreToolUse"),
            tool_name: agent.toolName,
            tool_input: agent.toolInput,
            tool_use_id: call.id,
          },
          agent.toolName,
        );
        verdicts.set(call.id, result);
        if (result.failure || result.folded.decision === "deny" || !result.folded.updatedInput)
          return undefined;
        const back = fromAgentInput(call.name, result.folded.updatedInput);
        if ("problem" in back) {
          verdicts.set(call.id, {
            ...result,
            failure: invalidUpdate("PreToolUse", result.folded.decidedBy ?? "?", back.problem).message,
          });
          return undefined;
        }
        return { ...call, args: back.args };
      });
      rein.hooks.toolGate.tap(tapOptions, (call) => {
        const result = verdicts.get(call.id);
        verdicts.delete(call.id);
        if (!result)
          return {
            decision: "deny",
            reason: "the PreToolUse hooks did not run for this call",
            rule: "PreToolUse",
          };
        if (result.failure)
          return { decision: "deny", reason: `${result.failure} (failing closed)`, rule: "PreToolUse" };
        const { decision, reason } = result.folded;
        if (decision === undefined) return undefined;
        return { decision, reason: reason ?? "", rule: "PreToolUse" };
      });
    }

    if (table.PostToolUse) {
      rein.hooks.toolResult.tapPromise(tapOptions, async (result, context) => {
        const agent = toAgentCall(context.call.name, context.call.args, cwd);
        const output = result.content.map((block) => (block.type === "text" ? block.text : "")).join("");
        const response =
          agent.toolName === "Bash"
            ? { stdout: output, stderr: "", interrupted: false, isImage: false }
            : { output };
        const ran = await run(
          "PostToolUse",
          {
            ...base("PostToolUse"),
            tool_name: agent.toolName,
            tool_input: agent.toolInput,
            tool_use_id: context.call.id,
            tool_response: response,
          },
          agent.toolName,
        );
        if (ran.failure)
          return {
            ...result,
            content: [{ type: "text", text: `${ran.failure} (the result is withheld: failing closed)` }],
            isError: true,
          };
        const { updatedOutput, context: notes, block } = ran.folded;
        let content = result.content;
        if (updatedOutput !== undefined) {
          const replaced =
            typeof updatedOutput === "string"
              ? updatedOutput
              : typeof (updatedOutput as { stdout?: unknown }).stdout === "string"
                ? (updatedOutput as { stdout: string }).stdout
                : JSON.stringify(updatedOutput);
          content = [{ type: "text", text: replaced }];
        }
        const extra = [...(block ? [`PostToolUse hook: ${block}`] : []), ...notes];
        if (extra.length > 0) content = [...content, { type: "text", text: extra.join("\n") }];
        return content === result.content ? undefined : { ...result, content };
      });
    }

    if (table.UserPromptSubmit) {
      rein.hooks.beforeRun.tapPromise(tapOptions, async (payload) => {
        const prompt = payload.messages
          .filter((message) => message.role === "user")
          .map((message) =>
            typeof message.content === "string"
              ? message.content
              : message.content.map((b) => (b.type === "text" ? b.text : "")).join(""),
          )
          .join("\n");
        const ran = await run("UserPromptSubmit", { ...base("UserPromptSubmit"), prompt });
        if (ran.failure) return { ...payload, block: { reason: `${ran.failure} (failing closed)` } };
        if (ran.folded.block) return { ...payload, block: { reason: ran.folded.block } };
        if (ran.folded.context.length === 0) return undefined;
        const note = { role: "user" as const, content: ran.folded.context.join("\n"), timestamp: Date.now() };
        return { ...payload, messages: [...payload.messages, note] };
      });
    }

    if (table.Stop) {
      rein.hooks.beforeStop.tapPromise(tapOptions, async (request) => {
        const last = request.lastMessage.content
          .map((block) => (block.type === "text" ? block.text : ""))
          .join("");
        const ran = await run("Stop", {
          ...base("Stop"),
          stop_hook_active: request.continuations > 0,
          last_assistant_message: last,
        });
        if (ran.failure) return { decision: "stop", reason: ran.failure };
        if (ran.folded.block)
          return { decision: "continue", message: ran.folded.block, reason: "a Stop hook blocked the stop" };
        return undefined;
      });
    }
  },
});
