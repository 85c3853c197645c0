/**
 * The `task` tool: runs a child agent on a prompt and answers with its result.
 *
 * Invariants:
 * - the child is started through the harness (`startChild`): its stack is the
 *   parent's taps plus this agent's narrowing, its session hangs under this call,
 *   and the `task` tool is never among its tools (children do not spawn children);
 * - children of one turn are numbered in call order (`task#1`, `task#2`, ... per
 *   run), run at most `maxConcurrent` at a time, and their results come back in
 *   call order (the harness keeps results in call order);
 * - an abort of the parent aborts the child (the tool's signal), and the child's
 *   session is closed (released) whatever happens;
 * - a child that cannot start as configured (a wider tool list, an unknown agent)
 *   is refused with an error result naming what and where, never started looser.
 */
import type { AgentHarness, AnyAgentTool, Rein, StartChildOptions, ToolResult } from "@rein/sdk";
import { startChild, Type } from "@rein/sdk";
import { applyNarrowing, type CompiledNarrowing } from "./narrowing.js";
import type { ChildAgentSpec, TaskOptions } from "./options.js";
import type { Slots } from "./slots.js";
import { childDecisions, childUsage, finalText, summaryText, type TaskDetails } from "./summary.js";

export const TASK_TOOL = "task";
export const DEFAULT_AGENT = "default";

export interface TaskToolSetup {
  rein: Rein;
  options: TaskOptions;
  /** Starts a child as the named agent config would (`childConfigs`). */
  start(agent: string, options: StartChildOptions): AgentHarness;
  slots: Slots;
  /** The next task number of the current run (`task#<n>`). */
  nextNumber(): number;
}

function describe(options: TaskOptions): string {
  const agents = Object.entries(options.agents);
  const list = agents.map(([name, spec]) => `- ${name}${spec.description ? `: ${spec.description}` : ""}`);
  return [
    "Delegate a self-contained piece of work to a child agent and get its final answer back.",
    "The child works in its own session with the same rules as you (it can never do what you may not).",
    "Several task calls in one response run in parallel.",
    ...(agents.length > 0 ? ["Agents:", ...list] : []),
  ].join("\n");
}

const refused = (plugin: string, details: TaskDetails, why: string): ToolResult<TaskDetails> => ({
  content: [{ type: "text", text: `${details.name} refused by ${plugin}:${why}` }],
  details,
  isError: true,
});

export function taskTool(setup: TaskToolSetup): AnyAgentTool {
  const { rein, options } = setup;
  const names = Object.keys(options.agents);
  return {
    name: TASK_TOOL,
    label: "Task",
    description: describe(options),
    parameters: Type.Object({
      prompt: Type.String({
        minLength: 1,
        description: "What the child agent should do, with all the context it needs.",
      }),
      agent: Type.Optional(
        names.length > 0
          ? Type.Union(
              names.map((name) => Type.Literal(name)),
              { description: "Which configured agent runs it." },
            )
          : Type.String({
              description: `Which configured agent runs it (none configured: "${DEFAULT_AGENT}").`,
            }),
      ),
    }),
    // Starting a child decides nothing by itself: every call it makes passes the parent's gates.
    risk: "read",
    executionMode: "parallel",
    idempotent: false,
    owner: rein.plugin.name,
    async execute(args: { prompt: string; agent?: string }, context): Promise<ToolResult<TaskDetails>> {
      const name = `${TASK_TOOL}#${setup.nextNumber()}`;
      const agent = args.agent ?? DEFAULT_AGENT;
      const spec = options.agents[agent];
      const details: TaskDetails = {
        name,
        path: name,
        agent,
        sessionId: "",
        status: "refused",
        decisions: [],
        usage: { turns: 0, tokens: 0, cost: 0 },
      };
      if (spec === undefined && agent !== DEFAULT_AGENT) {
        details.reason = `unknown agent "${agent}" (configured: ${names.join(", ") || "none"})`;
        return refused(rein.plugin.name, details, `agents: ${details.reason}`);
      }
      const release = await setup.slots.take(context.signal);
      let child: AgentHarness | undefined;
      try {
        try {
          child = setup.start(agent, { toolCallId: context.toolCallId, name });
        } catch (error) {
          details.reason = (error as Error).message.replace(/^startChild: /, "");
          const where = /tools can only narrow/.test(details.reason)
            ? `agents.${agent}.tools`
            : `agents.${agent}`;
          return refused(rein.plugin.name, details, `${where}: ${details.reason}`);
        }
        const agentInfo = child.hookContext().agent;
        details.path = agentInfo?.path ?? name;
        details.sessionId = child.sessionId;
        const running = child;
        const onAbort = () => running.abort(`the parent was aborted`);
        context.signal.addEventListener("abort", onAbort, { once: true });
        try {
          const outcome = await running.prompt(args.prompt);
          details.status = outcome.status;
          if (outcome.reason !== undefined) details.reason = outcome.reason;
          const entries = running.session.entries();
          details.decisions = childDecisions(entries);
          details.usage = childUsage(entries);
          const answer = finalText(outcome.messages);
          return {
            content: [{ type: "text", text: `${answer}\n\n${summaryText(details)}` }],
            details,
            isError: outcome.status !== "completed",
          };
        } finally {
          context.signal.removeEventListener("abort", onAbort);
        }
      } finally {
        if (child) {
          await child.close();
          child.session.close();
        }
        release();
      }
    },
  };
}

/**
 * Starts a child as agent config `spec` says: the parent's stack (startChild), its
 * tools, system prompt, and narrowing; the task tool itself never among its tools.
 */
export function startTaskChild(
  rein: Rein,
  options: TaskOptions,
  spec: ChildAgentSpec | undefined,
  narrowing: CompiledNarrowing | undefined,
  child: StartChildOptions,
): AgentHarness {
  const harness = startChild(rein, {
    excludeTools: [TASK_TOOL],
    inheritGrants: options.inheritGrants,
    ...(spec?.systemPrompt === undefined ? {} : { systemPrompt: spec.systemPrompt }),
    ...(spec?.tools === undefined ? {} : { activeTools: spec.tools }),
    ...child,
  });
  if (narrowing) applyNarrowing(rein.plugin.name, harness, narrowing);
  return harness;
}
