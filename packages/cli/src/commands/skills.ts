/**
 * `rein skills list|show|validate`: the Agent Skills the configured agent sees
 * (source, precedence, problems), one skill's fields and body, and a check of
 * skill folders against the specification. Reads text only: no plugin is set up,
 * no model is called.
 */
import { existsSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { discoverSkills, SKILL_FILE, type SkillDiscovery } from "@rein/sdk";
import { loadConfig } from "../config/load-config.js";
import { resolvePlugins } from "../config/resolve-plugins.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { findSkills } from "../skills/skill-sources.js";
import { terminal } from "../ui/terminal.js";

async function configuredSkills(globals: GlobalOptions): Promise<SkillDiscovery> {
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  return findSkills(loaded, await resolvePlugins(loaded));
}

export async function listSkills(options: { json?: boolean }, globals: GlobalOptions): Promise<number> {
  const found = await configuredSkills(globals);
  const term = terminal();
  if (options.json) {
    const skills = found.skills.map(({ body: _body, ...skill }) => skill);
    term.out.write(
      `${JSON.stringify({ skills, shadowed: found.shadowed, problems: found.problems }, null, 2)}\n`,
    );
    return ExitCode.ok;
  }
  if (found.skills.length === 0) term.err.write("no skills (add one with rein init --skill <name>)\n");
  const width = Math.max(0, ...found.skills.map((s) => s.name.length));
  for (const skill of found.skills) {
    const description =
      skill.description.length > 80 ? `${skill.description.slice(0, 79)}…` : skill.description;
    term.out.write(`${skill.name.padEnd(width)}  ${term.c.dim(`[${skill.source}]`)} ${description}\n`);
  }
  for (const shadow of found.shadowed)
    term.err.write(
      term.c.dim(`shadowed: ${shadow.name} at ${shadow.path} [${shadow.source}] (${shadow.by} wins)\n`),
    );
  for (const problem of found.problems) term.err.write(`${term.c.yellow("!")} ${problem} (skipped)\n`);
  return ExitCode.ok;
}

export async function showSkill(name: string, globals: GlobalOptions): Promise<number> {
  const found = await configuredSkills(globals);
  const skill = found.skills.find((s) => s.name === name);
  if (!skill) {
    const names = found.skills.map((s) => s.name);
    throw usageError(
      `no skill "${name}"`,
      names.length > 0 ? `skills: ${names.join(", ")}` : "rein skills list shows them",
    );
  }
  const out = terminal().out;
  out.write(`name: ${skill.name}\nsource: ${skill.source}\npath: ${skill.path}\nsha256: ${skill.sha256}\n`);
  out.write(`description: ${skill.description}\n`);
  if (skill.license) out.write(`license: ${skill.license}\n`);
  if (skill.compatibility) out.write(`compatibility: ${skill.compatibility}\n`);
  for (const [key, value] of Object.entries(skill.metadata ?? {})) out.write(`metadata.${key}: ${value}\n`);
  if (skill.allowedTools) out.write(`allowed-tools: ${skill.allowedTools.join(" ")}\n`);
  if (skill.files && skill.files.length > 0) out.write(`files: ${skill.files.join(", ")}\n`);
  out.write(`\n${skill.body}\n`);
  return ExitCode.ok;
}

/**
 * With no paths: every configured source. A path is a `SKILL.md`, a skill folder or
 * a folder of skill folders. Exit 1 when any skill is invalid.
 */
export async function validateSkills(paths: string[], globals: GlobalOptions): Promise<number> {
  const found = paths.length === 0 ? await configuredSkills(globals) : checkPaths(paths, globals.cwd);
  const term = terminal();
  for (const skill of found.skills) term.out.write(`${term.c.green("✓")} ${skill.path}\n`);
  for (const warning of found.warnings) term.err.write(`${term.c.yellow("!")} ${warning}\n`);
  for (const shadow of found.shadowed)
    term.err.write(
      `${term.c.yellow("!")} ${shadow.path}: name "${shadow.name}" is shadowed by ${shadow.by}\n`,
    );
  for (const problem of found.problems) term.err.write(`${term.c.red("✗")} ${problem}\n`);
  const total = found.skills.length + found.problems.length;
  term.err.write(`${found.skills.length} of ${total} skill${total === 1 ? "" : "s"} valid\n`);
  return found.problems.length > 0 ? ExitCode.failed : ExitCode.ok;
}

function checkPaths(paths: string[], cwd: string): SkillDiscovery {
  const all: SkillDiscovery = { skills: [], problems: [], warnings: [], shadowed: [] };
  for (const given of paths) {
    const path = resolve(cwd, given);
    if (!existsSync(path)) throw usageError(`${given}: no such file or folder`);
    const isFile = statSync(path).isFile();
    if (isFile && basename(path) !== SKILL_FILE)
      throw usageError(`${given}: not a ${SKILL_FILE} or a folder`);
    const skillDir = isFile ? dirname(path) : existsSync(join(path, SKILL_FILE)) ? path : undefined;
    // A folder of skills is a source; one skill folder is checked as the only skill of its parent.
    const found = discoverSkills([{ label: "path", dir: skillDir ? dirname(skillDir) : path }]);
    const file = skillDir ? join(skillDir, SKILL_FILE) : undefined;
    const mine = (line: string) => file === undefined || line.startsWith(`${file}:`);
    all.skills.push(
      ...found.skills.filter(
        (skill) => file === undefined || basename(skill.dir) === basename(skillDir as string),
      ),
    );
    all.problems.push(...found.problems.filter(mine));
    all.warnings.push(...found.warnings.filter(mine));
    all.shadowed.push(...found.shadowed);
  }
  return all;
}
