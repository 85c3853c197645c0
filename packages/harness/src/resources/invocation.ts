/**
 * What invoking a skill or a template does to a run: the text the model reads,
 * the session record of what was invoked (name, source path, content hash, so
 * replay and export can show it), and how an active skill's `allowed-tools`
 * narrows the tools of the following turns.
 *
 * Invariant: narrowing only removes tools. A skill can never add a tool, make an
 * inactive one active, or change a gate's verdict: the tools left still go
 * through every gate, policy and sandbox as before.
 */
import { dirname } from "node:path";
import { invalidArgument } from "../errors.js";
import type { SessionEntry } from "../session/entries.js";
import type { AnyAgentTool } from "../tools.js";
import { expandArguments } from "./arguments.js";
import type { SkillResource, TemplateResource } from "./resource-types.js";

export const SKILL_ENTRY = "rein.skill";
export const TEMPLATE_ENTRY = "rein.prompt_template";

/**
 * How a skill came to be active: `harness.skill()` (a person, `/name`), the model's
 * `skill` tool, or `resume()` continuing a parked run it was active in.
 */
export type SkillVia = "invoke" | "tool" | "resume";

export interface SkillInvocationRecord {
  name: string;
  path: string;
  sha256: string;
  args: string[];
  via: SkillVia;
  /** The run it is active in. */
  runId: string;
  /** Its `allowed-tools` when invoked: a resumed run narrows as the parked one did. */
  allowedTools?: string[];
}

export function skillRecord(skill: SkillResource, args: readonly string[], via: SkillVia, runId: string) {
  const data: SkillInvocationRecord = {
    name: skill.name,
    path: skill.path,
    sha256: skill.sha256,
    args: [...args],
    via,
    runId,
    ...(skill.allowedTools ? { allowedTools: [...skill.allowedTools] } : {}),
  };
  return { type: "custom" as const, customType: SKILL_ENTRY, data };
}

/**
 * The skills active in run `runId` as its records say (a stand-in per skill: the name,
 * where it was read, its allowed-tools): what a resumed run narrows by.
 */
export function recordedSkills(entries: readonly SessionEntry[], runId: string): SkillResource[] {
  const skills = new Map<string, SkillResource>();
  for (const entry of entries) {
    if (entry.type !== "custom" || entry.customType !== SKILL_ENTRY) continue;
    const data = entry.data as Partial<SkillInvocationRecord> | undefined;
    if (data?.runId !== runId || typeof data.name !== "string" || skills.has(data.name)) continue;
    const path = String(data.path);
    skills.set(data.name, {
      name: data.name,
      description: "",
      body: "",
      path,
      dir: dirname(path),
      sha256: String(data.sha256),
      ...(Array.isArray(data.allowedTools) ? { allowedTools: data.allowedTools.map(String) } : {}),
    });
  }
  return [...skills.values()];
}

export function templateRecord(template: TemplateResource, args: readonly string[]) {
  return {
    type: "custom" as const,
    customType: TEMPLATE_ENTRY,
    data: { name: template.name, file: template.path, sha256: template.sha256, args: [...args] },
  };
}

const escapeAttribute = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** The skill as the model reads it: its folder, its files and its body (arguments expanded). */
export function skillText(skill: SkillResource, args: readonly string[]): string {
  const lines = [`<skill name="${escapeAttribute(skill.name)}" location="${escapeAttribute(skill.path)}">`];
  lines.push(
    `Skill folder: ${skill.dir} (read its files with the file tools; run its scripts only with the shell tool).`,
  );
  if (skill.files && skill.files.length > 0) lines.push(`Files: ${skill.files.join(", ")}`);
  lines.push("", expandArguments(skill.body, args), "</skill>");
  return lines.join("\n");
}

export function templateText(template: TemplateResource, args: readonly string[]): string {
  return expandArguments(template.body, args);
}

/** Names Agent Skills written for other agents use, and the Rein tool each means. */
const TOOL_ALIASES: Readonly<Record<string, string>> = { glob: "find", multiedit: "edit" };

/**
 * The tool names an `allowed-tools` entry list names: `Read`, `bash`, `Bash(git:*)`.
 * A scope in parentheses is not a rule of its own here (the policy's rules decide
 * calls): it keeps the tool, never more.
 */
export function allowedToolNames(entries: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const entry of entries) {
    const name = entry.replace(/\(.*$/s, "").trim().toLowerCase();
    if (name === "") continue;
    names.add(TOOL_ALIASES[name] ?? name);
  }
  return names;
}

/** Splits an `allowed-tools` value: space-delimited (the spec), commas tolerated; a `(...)` scope stays whole. */
export function parseAllowedTools(value: string): string[] {
  return [...value.matchAll(/[^\s,(]+(?:\([^)]*\))?/g)].map((match) => match[0]);
}

/** The tools a turn keeps while `skills` are active: those every active skill's `allowed-tools` names. */
export function narrowTools(
  tools: readonly AnyAgentTool[],
  skills: readonly SkillResource[],
): readonly AnyAgentTool[] {
  let kept = tools;
  for (const skill of skills) {
    if (skill.allowedTools === undefined) continue;
    const allowed = allowedToolNames(skill.allowedTools);
    kept = kept.filter((tool) => allowed.has(tool.name.toLowerCase()));
  }
  return kept;
}

/** The resource called `name`, or an `invalid_argument` listing the ones there are. */
export function findResource<T extends { readonly name: string }>(
  list: readonly T[],
  name: string,
  kind: "skill" | "prompt template",
): T {
  const found = typeof name === "string" ? list.find((item) => item.name === name) : undefined;
  if (found) return found;
  const names = list.map((item) => item.name);
  throw invalidArgument(
    `no ${kind} ${JSON.stringify(name)} (${names.length > 0 ? `${kind}s: ${names.join(", ")}` : `no ${kind}s are set`})`,
  );
}
