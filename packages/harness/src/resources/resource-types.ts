/**
 * Skills and prompt templates: typed resources of the live config and the turn
 * snapshot (spec "Three kinds of state"). They are plain immutable values: the
 * harness never reads a file; whoever discovers them (the SDK's discovery, a test)
 * hands them over with `setSkills` / `setTemplates`.
 */
import { invalidArgument } from "../errors.js";

/** An Agent Skill (a folder with a `SKILL.md`), already read and validated. */
export interface SkillResource {
  /** 1-64 of a-z 0-9 and single hyphens (the Agent Skills rule); unique within the list. */
  readonly name: string;
  /** What it does and when to use it: what the model sees in the catalog. */
  readonly description: string;
  /** The Markdown body (after the front matter): loaded only when the skill is used. */
  readonly body: string;
  /** The canonical path of its `SKILL.md`. */
  readonly path: string;
  /** The canonical path of the skill folder (scripts/, references/, assets/ live there). */
  readonly dir: string;
  /** sha256 (hex) of the whole `SKILL.md` as read. */
  readonly sha256: string;
  /** Where it was found (`project`, `agents`, `claude`, `user`, `config`, `plugin:<name>`, ...). */
  readonly source?: string;
  /** The `allowed-tools` entries; while the skill is active only these tools stay active. */
  readonly allowedTools?: readonly string[];
  readonly license?: string;
  readonly compatibility?: string;
  readonly metadata?: Readonly<Record<string, string>>;
  /** Files under the folder (relative, `/`-separated), listed for the model when it loads the skill. */
  readonly files?: readonly string[];
}

/** A prompt template: a Markdown body with `$1`..`$9`, `$ARGUMENTS` / `$@` placeholders. */
export interface TemplateResource {
  readonly name: string;
  readonly description?: string;
  readonly argumentHint?: string;
  readonly body: string;
  /** Where it was read from, as the caller wants it recorded. */
  readonly path: string;
  /** sha256 (hex) of the file as read. */
  readonly sha256: string;
}

export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const TEMPLATE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const SHA256 = /^[0-9a-f]{64}$/;

const isString = (value: unknown): value is string => typeof value === "string";

function checkCommon(
  kind: string,
  where: string,
  item: Record<string, unknown>,
  pattern: RegExp,
  seen: Set<string>,
): void {
  if (!isString(item.name) || !pattern.test(item.name) || (kind === "skill" && item.name.length > 64))
    throw invalidArgument(`${where}: ${kind} name ${JSON.stringify(item.name)} is invalid`);
  if (seen.has(item.name)) throw invalidArgument(`${where}: duplicate ${kind} name "${item.name}"`);
  seen.add(item.name);
  if (!isString(item.body)) throw invalidArgument(`${where}: ${kind} "${item.name}" has no body (a string)`);
  if (!isString(item.path) || item.path === "")
    throw invalidArgument(`${where}: ${kind} "${item.name}" has no path`);
  if (!isString(item.sha256) || !SHA256.test(item.sha256))
    throw invalidArgument(`${where}: ${kind} "${item.name}" needs sha256 (64 hex digits)`);
}

export function validateSkills(skills: readonly SkillResource[], where = "skills"): void {
  if (!Array.isArray(skills)) throw invalidArgument(`${where} must be an array of skills`);
  const seen = new Set<string>();
  for (const [index, skill] of skills.entries()) {
    const at = `${where}[${index}]`;
    if (typeof skill !== "object" || skill === null) throw invalidArgument(`${at} must be a skill object`);
    const item = skill as unknown as Record<string, unknown>;
    checkCommon("skill", at, item, SKILL_NAME_PATTERN, seen);
    if (!isString(item.description) || item.description.trim() === "")
      throw invalidArgument(`${at}: skill "${skill.name}" has no description`);
    if (!isString(item.dir) || item.dir === "")
      throw invalidArgument(`${at}: skill "${skill.name}" has no dir`);
    if (
      item.allowedTools !== undefined &&
      !(Array.isArray(item.allowedTools) && item.allowedTools.every(isString))
    )
      throw invalidArgument(`${at}: skill "${skill.name}": allowedTools must be an array of strings`);
    if (item.files !== undefined && !(Array.isArray(item.files) && item.files.every(isString)))
      throw invalidArgument(`${at}: skill "${skill.name}": files must be an array of strings`);
  }
}

export function validateTemplates(templates: readonly TemplateResource[], where = "templates"): void {
  if (!Array.isArray(templates)) throw invalidArgument(`${where} must be an array of prompt templates`);
  const seen = new Set<string>();
  for (const [index, template] of templates.entries()) {
    const at = `${where}[${index}]`;
    if (typeof template !== "object" || template === null)
      throw invalidArgument(`${at} must be a prompt template object`);
    checkCommon("template", at, template as unknown as Record<string, unknown>, TEMPLATE_NAME_PATTERN, seen);
  }
}
