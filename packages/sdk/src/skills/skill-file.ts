/**
 * One `SKILL.md`, checked against the Agent Skills specification
 * (https://agentskills.io/specification): YAML front matter with `name` (1-64 of
 * a-z 0-9 and single hyphens, not at either end, equal to the folder's name),
 * `description` (1-1024 characters), optional `license`, `compatibility` (1-500
 * characters), `metadata` (string to string) and `allowed-tools` (space-delimited),
 * then a Markdown body.
 *
 * Invariant: a file that breaks a rule is one problem line naming the file and the
 * rule, never a throw; a field the spec does not define is a warning (skills written
 * for other agents carry their own), and the skill still loads.
 */
import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { basename, dirname } from "node:path";
import { parseAllowedTools, SKILL_NAME_PATTERN } from "@rein/harness";

/**
 * `yaml` (~70 modules) is required on the first skill file, not imported: a run
 * without skills (most) never loads it, and this check stays synchronous.
 */
let yaml: typeof import("yaml") | undefined;
const parseYaml = (text: string): unknown => {
  yaml ??= createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return yaml.parse(text);
};

export const SKILL_FILE = "SKILL.md";
export const MAX_NAME = 64;
export const MAX_DESCRIPTION = 1024;
export const MAX_COMPATIBILITY = 500;
const KNOWN_FIELDS = new Set([
  "name",
  "description",
  "license",
  "compatibility",
  "metadata",
  "allowed-tools",
]);

/** What the front matter says, as read (the SDK adds where it was found). */
export interface SkillFields {
  name: string;
  description: string;
  body: string;
  sha256: string;
  license?: string;
  compatibility?: string;
  metadata?: Record<string, string>;
  allowedTools?: string[];
}

export type SkillFileResult =
  | { ok: true; fields: SkillFields; warnings: string[] }
  | { ok: false; problem: string };

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** Checks the text of `<folder>/SKILL.md`; `file` names it in every message. */
export function checkSkillFile(file: string, text: string): SkillFileResult {
  const bad = (rule: string): SkillFileResult => ({ ok: false, problem: `${file}: ${rule}` });
  const front = FRONT_MATTER.exec(text);
  if (!front) return bad("no YAML front matter (the file must start with --- and name, description)");
  let meta: unknown;
  try {
    meta = parseYaml(front[1] as string);
  } catch (error) {
    const message = (error as Error).message.split("\n")[0];
    return bad(`front matter is not valid YAML: ${message}`);
  }
  if (meta === null || typeof meta !== "object" || Array.isArray(meta))
    return bad("front matter must be key: value pairs");
  const fields = meta as Record<string, unknown>;
  const folder = basename(dirname(file));

  const { name, description, license, compatibility, metadata } = fields;
  if (typeof name !== "string" || name === "") return bad("name is missing (required, a string)");
  if (name.length > MAX_NAME) return bad(`name is ${name.length} characters (at most ${MAX_NAME})`);
  if (!SKILL_NAME_PATTERN.test(name))
    return bad(
      `name ${JSON.stringify(name)} must be lowercase letters, digits and single hyphens, not starting or ending with one`,
    );
  if (name !== folder) return bad(`name "${name}" must match its folder's name "${folder}"`);
  if (typeof description !== "string" || description.trim() === "")
    return bad("description is missing (required, a non-empty string)");
  if (description.length > MAX_DESCRIPTION)
    return bad(`description is ${description.length} characters (at most ${MAX_DESCRIPTION})`);
  if (license !== undefined && typeof license !== "string") return bad("license must be a string");
  if (compatibility !== undefined) {
    if (typeof compatibility !== "string" || compatibility === "")
      return bad("compatibility must be a non-empty string");
    if (compatibility.length > MAX_COMPATIBILITY)
      return bad(`compatibility is ${compatibility.length} characters (at most ${MAX_COMPATIBILITY})`);
  }
  if (metadata !== undefined) {
    if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
      return bad("metadata must be a map of string keys to string values");
    const wrong = Object.entries(metadata).find(([, value]) => typeof value !== "string");
    if (wrong) return bad(`metadata.${wrong[0]} must be a string`);
  }
  const allowed = fields["allowed-tools"];
  let allowedTools: string[] | undefined;
  if (allowed !== undefined) {
    if (typeof allowed === "string") allowedTools = parseAllowedTools(allowed);
    else if (Array.isArray(allowed) && allowed.every((item) => typeof item === "string"))
      allowedTools = allowed.flatMap((item) => parseAllowedTools(item));
    else return bad("allowed-tools must be a space-delimited string of tool names");
  }

  const warnings = Object.keys(fields)
    .filter((key) => !KNOWN_FIELDS.has(key))
    .map((key) => `${file}: field "${key}" is not in the Agent Skills specification (ignored)`);
  const result: SkillFields = {
    name,
    description: description.trim(),
    body: text.slice(front[0].length).trim(),
    sha256: createHash("sha256").update(text).digest("hex"),
  };
  if (license !== undefined) result.license = license;
  if (compatibility !== undefined) result.compatibility = compatibility;
  if (metadata !== undefined) result.metadata = { ...(metadata as Record<string, string>) };
  if (allowedTools !== undefined) result.allowedTools = allowedTools;
  return { ok: true, fields: result, warnings };
}
