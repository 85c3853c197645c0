/** Skills and prompt templates: the resources of the live config and the turn snapshot. */
export { expandArguments, type InvocationArgs, splitArguments } from "./arguments.js";
export { DEFAULT_CATALOG_BUDGET, skillCatalog } from "./catalog.js";
export {
  allowedToolNames,
  parseAllowedTools,
  SKILL_ENTRY,
  type SkillInvocationRecord,
  type SkillVia,
  TEMPLATE_ENTRY,
} from "./invocation.js";
export {
  SKILL_NAME_PATTERN,
  type SkillResource,
  TEMPLATE_NAME_PATTERN,
  type TemplateResource,
} from "./resource-types.js";
export { createSkillTool, SKILL_TOOL_NAME, type SkillHost } from "./skill-tool.js";
