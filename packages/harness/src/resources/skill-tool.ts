/**
 * The `skill` tool: how the model loads a skill from the catalog. Its result is
 * the skill's body and the list of files in its folder; the model then reads
 * those files with the ordinary file tools and runs scripts with the shell tool,
 * so each of those calls goes through the gates like any other (a skill grants
 * nothing by itself). Loading a skill activates it for the rest of the run: its
 * `allowed-tools` narrow the following turns' tools.
 */
import { Type } from "typebox";
import { isHarnessError } from "../errors.js";
import { type AgentTool, textResult } from "../tools.js";
import type { SkillResource } from "./resource-types.js";

export const SKILL_TOOL_NAME = "skill";

/** What the tool needs of its harness (`AgentHarness` is one). */
export interface SkillHost {
  activateSkill(name: string, args?: string): { skill: SkillResource; text: string };
}

const parameters = Type.Object({
  name: Type.String({ description: "The skill's name, as the system prompt lists it" }),
  arguments: Type.Optional(Type.String({ description: "Arguments for the skill, if it takes any" })),
});

export function createSkillTool(host: SkillHost): AgentTool<typeof parameters> {
  return {
    name: SKILL_TOOL_NAME,
    label: "Skill",
    description:
      "Load a skill by name: its instructions, and the files in its folder (read them with the file tools). Use it when a task matches a skill in the system prompt's list, before acting.",
    parameters,
    risk: "read",
    execute(args) {
      try {
        const { skill, text } = host.activateSkill(args.name, args.arguments);
        return {
          content: [{ type: "text", text }],
          details: { skill: skill.name, path: skill.path, sha256: skill.sha256 },
        };
      } catch (error) {
        if (isHarnessError(error, "invalid_argument")) return textResult(error.message, true);
        throw error;
      }
    },
  };
}
