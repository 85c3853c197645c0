/**
 * @rein/tools-task: the first-party `task` tool. A parent agent delegates work to
 * child agents; each child's reins are the parent's (every gate, permission,
 * redaction and budget) plus optional narrowing, never looser. See README.md.
 *
 * On load it also recovers the child sessions of this session that a crash left
 * open (their interrupted calls get results; nothing runs again).
 */
import { childConfigs, definePlugin, recoverChildren, type StartChildOptions } from "@rein/sdk";
import { type CompiledNarrowing, compileNarrowing } from "./narrowing.js";
import { checkNarrowing, TaskOptions } from "./options.js";
import { Slots } from "./slots.js";
import { DEFAULT_AGENT, startTaskChild, taskTool } from "./task-tool.js";

export { looseningRefused, TaskErrorCode } from "./errors.js";
export { ChildAgentSpec, TaskOptions } from "./options.js";
export type { ChildDecision, TaskDetails } from "./summary.js";
export { DEFAULT_AGENT, TASK_TOOL } from "./task-tool.js";

export default definePlugin({
  name: "@rein/tools-task",
  version: "0.1.0",
  description: "A task tool: child agents whose reins are the parent's and only tighten.",
  options: TaskOptions,
  rules: (options) => [
    ...Object.entries(options.agents).flatMap(([agent, spec]) =>
      (spec.rules ?? []).map((rule, index) => rule.id ?? `${agent}.rules[${index}]`),
    ),
    ...(Object.values(options.agents).some((spec) => spec.sandbox !== undefined) ? ["sandbox"] : []),
  ],
  async setup(rein, options) {
    checkNarrowing(rein.plugin.name, options);
    const narrowing = new Map<string, CompiledNarrowing>();
    for (const [agent, spec] of Object.entries(options.agents)) {
      narrowing.set(agent, await compileNarrowing(rein.plugin.name, agent, spec, rein.config.cwd));
    }
    for (const { sessionId, report } of recoverChildren(rein)) {
      rein.logger.warn(
        `recovered child session ${sessionId}: ${report.toolResults.length} interrupted call(s) closed`,
      );
    }
    let number = 0;
    rein.on("agent_start", () => {
      number = 0;
    });
    const start = (agent: string, child: StartChildOptions) =>
      startTaskChild(rein, options, options.agents[agent], narrowing.get(agent), child);
    // Each agent config, for `rein check --as-child` and `rein replay` (`default`: no config).
    const configs = childConfigs(rein);
    for (const agent of new Set([DEFAULT_AGENT, ...Object.keys(options.agents)])) {
      configs.set(agent, { plugin: rein.plugin.name, start: (child) => start(agent, child) });
      rein.onDispose(() => {
        if (configs.get(agent)?.plugin === rein.plugin.name) configs.delete(agent);
      });
    }
    rein.registerTool(
      taskTool({ rein, options, start, slots: new Slots(options.maxConcurrent), nextNumber: () => ++number }),
    );
  },
});
