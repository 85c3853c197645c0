/**
 * The skills catalog a system prompt carries: names and descriptions only
 * (progressive disclosure: the body is loaded when the skill is used), within a
 * token budget. Skills that do not fit are named in a last line, so the model
 * can still ask for them by name.
 */
import { estimateTextTokens } from "../compaction/token-estimate.js";
import type { SkillResource } from "./resource-types.js";

export const DEFAULT_CATALOG_BUDGET = 2_000;

const escapeText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function skillCatalog(
  skills: readonly SkillResource[],
  options: { budgetTokens?: number; toolName?: string } = {},
): string {
  if (skills.length === 0) return "";
  const budget = options.budgetTokens ?? DEFAULT_CATALOG_BUDGET;
  const tool = options.toolName ?? "skill";
  const head = [
    "The following skills provide specialized instructions for specific tasks.",
    `When a task matches a skill's description, load it with the \`${tool}\` tool (by name) before you act, then follow it.`,
    "<available_skills>",
  ];
  const tail = "</available_skills>";
  let used = estimateTextTokens(head.join("\n")) + estimateTextTokens(tail);
  const listed: string[] = [];
  const left: string[] = [];
  for (const skill of skills) {
    const line = `<skill><name>${escapeText(skill.name)}</name><description>${escapeText(skill.description)}</description></skill>`;
    const cost = estimateTextTokens(line);
    if (left.length === 0 && used + cost <= budget) {
      listed.push(line);
      used += cost;
    } else left.push(skill.name);
  }
  const lines = [...head, ...listed, tail];
  if (left.length > 0) lines.push(`More skills (no room for their descriptions): ${left.join(", ")}`);
  return lines.join("\n");
}
