/**
 * Prompt templates: `.rein/prompts/<name>.md` in the project root, used as
 * `/name args` in chat and `rein run /name args`. An optional YAML front matter
 * gives `description` and `argument-hint` (other keys are ignored). In the body,
 * `$1`..`$9` are the positional arguments (empty when missing), `$ARGUMENTS` and
 * `$@` all of them joined by spaces. A template with no placeholder gets the
 * arguments appended on a line of their own, so they are never silently dropped.
 *
 * Invariant: templates are read when used (an edit applies at once) and only
 * from the project's own folder; a bad front matter is an error naming the file.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative, sep } from "node:path";
import {
  type AgentHarness,
  expandArguments,
  splitArguments,
  TEMPLATE_ENTRY,
  type TemplateResource,
} from "@rein/harness";
import { usageError } from "../errors.js";

/** yaml (~280 KiB of modules) loads with the first front matter, not with every `rein run`. */
function parseYaml(text: string): unknown {
  const yaml = createRequire(import.meta.url)("yaml") as typeof import("yaml");
  return yaml.parse(text);
}

export const TEMPLATE_DIR = ".rein/prompts";
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export interface PromptTemplate {
  name: string;
  file: string;
  description?: string;
  argumentHint?: string;
  body: string;
  sha256: string;
}

export function templateNames(root: string): string[] {
  const dir = join(root, TEMPLATE_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((file) => file.endsWith(".md") && NAME.test(file.slice(0, -3)))
    .map((file) => file.slice(0, -3))
    .sort();
}

export function readTemplate(root: string, name: string): PromptTemplate | undefined {
  if (!NAME.test(name)) return undefined;
  const file = join(root, TEMPLATE_DIR, `${name}.md`);
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, "utf8");
  const template: PromptTemplate = {
    name,
    file,
    body: text,
    sha256: createHash("sha256").update(text).digest("hex"),
  };
  const front = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (front) {
    let meta: unknown;
    try {
      meta = parseYaml(front[1] as string);
    } catch (error) {
      throw usageError(`${file}: front matter is not valid YAML: ${(error as Error).message}`);
    }
    if (meta !== null && (typeof meta !== "object" || Array.isArray(meta)))
      throw usageError(`${file}: front matter must be key: value pairs`);
    const fields = (meta ?? {}) as Record<string, unknown>;
    if (typeof fields.description === "string") template.description = fields.description;
    if (typeof fields["argument-hint"] === "string") template.argumentHint = fields["argument-hint"];
    template.body = text.slice(front[0].length);
  }
  template.body = template.body.trim();
  return template;
}

export { splitArguments };

export function expandTemplate(template: PromptTemplate, args: readonly string[]): string {
  return expandArguments(template.body, args);
}

export interface TemplateCall {
  template: PromptTemplate;
  args: string[];
  /** The expanded text: the user message. */
  text: string;
}

/**
 * A prompt `/name args` as a template call; undefined when it is not one (no
 * leading \`/name\`, a path such as \`/etc/hosts\`, a name in \`skip\`). \`words\`,
 * when given, are the arguments as the shell split them. \`strict\` (\`rein run\`)
 * makes a \`/name\` that names no template an error instead of a prompt.
 */
export function parseTemplateCall(
  root: string,
  prompt: string,
  options: { strict: boolean; words?: readonly string[]; skip?: ReadonlySet<string> },
): TemplateCall | undefined {
  const match = /^\/([^\s/]+)(?:\s+([\s\S]*))?$/.exec(prompt.trim());
  if (!match) return undefined;
  const name = match[1] as string;
  if (options.skip?.has(`/${name}`)) return undefined;
  const args =
    options.words && options.words.length > 1 ? options.words.slice(1) : splitArguments(match[2] ?? "");
  const template = readTemplate(root, name);
  if (!template) {
    if (options.strict) throw unknownTemplate(root, name);
    return undefined;
  }
  return { template, args: [...args], text: expandTemplate(template, args) };
}

export { TEMPLATE_ENTRY };

/** A template as the harness's resource: recorded with its project-relative file. */
function templateResource(root: string, template: PromptTemplate): TemplateResource {
  return {
    name: template.name,
    body: template.body,
    path: relative(root, template.file).split(sep).join("/"),
    sha256: template.sha256,
    ...(template.description !== undefined ? { description: template.description } : {}),
    ...(template.argumentHint !== undefined ? { argumentHint: template.argumentHint } : {}),
  };
}

/**
 * Gives the harness the project's templates as they are now (a template with a bad
 * front matter is left out; using it names the file), so hooks and snapshots see them.
 */
export function refreshTemplates(harness: AgentHarness, root: string): void {
  const templates: TemplateResource[] = [];
  for (const name of templateNames(root)) {
    try {
      const template = readTemplate(root, name);
      if (template) templates.push(templateResource(root, template));
    } catch {
      // Reported when used: `parseTemplateCall` reads it again and names the file.
    }
  }
  harness.setTemplates(templates);
}

/**
 * Runs a template call through `harness.template()` (which records the name, file,
 * sha256 and arguments as a \`rein.prompt_template\` entry), on the templates as they are now.
 */
export function runTemplateCall(harness: AgentHarness, root: string, call: TemplateCall) {
  refreshTemplates(harness, root);
  return harness.template(call.template.name, call.args);
}

/** The error for `/name` that names no template (listing those there are). */
export function unknownTemplate(root: string, name: string) {
  const names = templateNames(root);
  return usageError(
    `no prompt template "/${name}" (looked for ${join(root, TEMPLATE_DIR, `${name}.md`)})`,
    names.length > 0
      ? `templates: ${names.map((n) => `/${n}`).join(", ")}`
      : `add ${TEMPLATE_DIR}/${name}.md, or do not start the prompt with /`,
  );
}
