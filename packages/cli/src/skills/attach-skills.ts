/**
 * Gives a configured agent its skills: the harness's `skills` resource, the
 * `skill` tool (registered after the plugins, so a plugin's own `skill` tool
 * keeps its name), and a system prompt that lists them (names and descriptions,
 * within `skills.budgetTokens`) whenever the `skill` tool is active.
 */
import {
  type AgentHarness,
  createSkillTool,
  SKILL_TOOL_NAME,
  type SkillResource,
  type SystemPromptSource,
  skillCatalog,
} from "@rein/harness";

export function attachSkills(harness: AgentHarness, skills: readonly SkillResource[]): string | undefined {
  harness.setSkills(skills);
  if (skills.length === 0) return undefined;
  const existing = harness.tools.find((tool) => tool.name === SKILL_TOOL_NAME);
  if (existing?.owner === "rein") return undefined; // attached before (a reload)
  if (existing)
    return `a tool named "${SKILL_TOOL_NAME}" (from ${existing.owner ?? "the harness"}) is registered: skills are not offered to the model`;
  harness.setTools([...harness.tools, Object.freeze({ ...createSkillTool(harness), owner: "rein" })]);
  return undefined;
}

/** The system prompt, then the skills catalog when the turn's tools include the `skill` tool. */
export function withSkillCatalog(
  source: SystemPromptSource,
  budget: () => number | undefined = () => undefined,
): SystemPromptSource {
  return async (input) => {
    const budgetTokens = budget();
    const base = typeof source === "string" ? source : await source(input);
    const offered = input.tools.some((tool) => tool.name === SKILL_TOOL_NAME && tool.owner === "rein");
    const catalog = offered
      ? skillCatalog(input.skills, budgetTokens === undefined ? {} : { budgetTokens })
      : "";
    return [base, catalog].filter((part) => part !== "").join("\n\n");
  };
}
