/**
 * `/name args` naming a skill: in chat, and as `rein run /name args`. Templates
 * (`.rein/prompts/`) are looked up first, then skills, so adding a skill never
 * changes what an existing `/template` does.
 */
import { type SkillResource, splitArguments } from "@rein/harness";

export interface SkillCall {
  name: string;
  args: string[];
}

/** `words`, when given, are the arguments as the shell split them (`rein run /name a "b c"`). */
export function parseSkillCall(
  skills: readonly SkillResource[],
  prompt: string,
  words?: readonly string[],
): SkillCall | undefined {
  const match = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(prompt.trim());
  if (!match) return undefined;
  const name = match[1] as string;
  if (!skills.some((skill) => skill.name === name)) return undefined;
  const args = words && words.length > 1 ? words.slice(1) : splitArguments(match[2] ?? "");
  return { name, args: [...args] };
}
