/** Agent Skills discovery and validation. */
export {
  type DiscoverOptions,
  discoverSkills,
  type ShadowedSkill,
  type SkillDiscovery,
  type SkillSource,
} from "./discover-skills.js";
export { checkSkillFile, SKILL_FILE, type SkillFields, type SkillFileResult } from "./skill-file.js";
