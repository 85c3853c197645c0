/**
 * A turn snapshot: everything one turn runs with, frozen at turn start (spec
 * "Turn snapshot"). It is a shallow copy: tool definitions are immutable values,
 * so a setter that replaces a tool never changes a snapshot already taken.
 */
import type { LoopTurn } from "../loop/loop-types.js";
import type { SkillResource, TemplateResource } from "../resources/resource-types.js";
import type { AnyAgentTool } from "../tools.js";

export interface TurnSnapshot extends LoopTurn {
  readonly runId: string;
  readonly turnId: string;
  /** Every registered tool at turn start (`tools` holds only the active ones). */
  readonly allTools: readonly AnyAgentTool[];
  readonly activeToolNames: readonly string[];
  readonly resources: Readonly<Record<string, unknown>>;
  readonly skills: readonly SkillResource[];
  readonly templates: readonly TemplateResource[];
  /** Skills active in this run (invoked or loaded by the model): their `allowed-tools` narrowed `tools`. */
  readonly activeSkills: readonly string[];
  readonly sessionId: string;
}
