/**
 * Finds Agent Skills: every `<source>/<folder>/SKILL.md`, in source order. The
 * first skill of a name wins; a later one of the same name is reported as
 * shadowed (the precedence is the order of `sources`, documented where the
 * sources are chosen).
 *
 * Invariants (security.md): discovery only reads text, it never runs anything; a
 * path is resolved once to its canonical form and must stay inside its source's
 * boundary (a folder or `SKILL.md` that is a symlink out of it is refused, not
 * followed); nothing inside Rein's own state (`refuse`) is read; a bad skill is
 * one problem line naming its file, and discovery goes on.
 */
import {
  type Dirent,
  existsSync,
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
} from "node:fs";
import { join, relative, sep } from "node:path";
import type { SkillResource } from "@rein/harness";
import { isInside } from "../paths/resolve.js";
import { checkSkillFile, SKILL_FILE } from "./skill-file.js";

/** Where skills live: a folder whose subfolders are skills. */
export interface SkillSource {
  /** Names the source in listings: `project`, `agents`, `claude`, `user`, `config`, `plugin:<name>`. */
  label: string;
  dir: string;
  /** A skill must resolve inside this folder (default: `dir`). */
  boundary?: string;
}

export interface ShadowedSkill {
  name: string;
  path: string;
  source: string;
  /** The skill that won: its path. */
  by: string;
}

export interface SkillDiscovery {
  skills: SkillResource[];
  /** One line per skipped skill, naming its file. */
  problems: string[];
  /** One line per oddity that did not stop a skill (unknown front matter fields). */
  warnings: string[];
  shadowed: ShadowedSkill[];
}

export interface DiscoverOptions {
  /** Canonical folders never read from (Rein's own state). */
  refuse?: readonly string[];
  /** Largest `SKILL.md` read, in bytes. Default 256 KiB. */
  maxBytes?: number;
}

const MAX_FILES = 100;
const MAX_DEPTH = 4;

const inside = (path: string, folder: string) => isInside(folder, path);

const canonical = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};

export function discoverSkills(
  sources: readonly SkillSource[],
  options: DiscoverOptions = {},
): SkillDiscovery {
  const found: SkillDiscovery = { skills: [], problems: [], warnings: [], shadowed: [] };
  const refuse = (options.refuse ?? []).map((dir) => canonical(dir) ?? dir);
  const maxBytes = options.maxBytes ?? 256 * 1024;
  const seenDirs = new Set<string>();
  for (const source of sources) {
    if (!existsSync(source.dir)) continue;
    const root = canonical(source.dir);
    const boundary = canonical(source.boundary ?? source.dir);
    if (root === undefined || boundary === undefined || !statSync(root).isDirectory()) continue;
    if (!inside(root, boundary)) {
      found.problems.push(
        `${source.dir}: resolves to ${root}, outside ${boundary} (skills there are not read)`,
      );
      continue;
    }
    let entries: Dirent[];
    try {
      entries = readdirSync(root, { withFileTypes: true });
    } catch (error) {
      found.problems.push(`${source.dir}: cannot be listed (${(error as Error).message})`);
      continue;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (entry.name.startsWith(".")) continue;
      const shown = join(source.dir, entry.name);
      const dir = canonical(join(root, entry.name));
      if (dir === undefined || !statSync(dir).isDirectory()) continue;
      const file = join(shown, SKILL_FILE);
      if (!existsSync(join(dir, SKILL_FILE))) continue;
      const why = refusal(dir, join(dir, SKILL_FILE), boundary, refuse, maxBytes);
      if (why) {
        found.problems.push(`${file}: ${why}`);
        continue;
      }
      if (seenDirs.has(dir)) continue; // the same folder reached through two sources
      seenDirs.add(dir);
      const path = join(dir, SKILL_FILE);
      const checked = checkSkillFile(file, readFileSync(path, "utf8"));
      if (!checked.ok) {
        found.problems.push(checked.problem);
        continue;
      }
      found.warnings.push(...checked.warnings);
      const winner = found.skills.find((skill) => skill.name === checked.fields.name);
      if (winner) {
        found.shadowed.push({ name: winner.name, path, source: source.label, by: winner.path });
        continue;
      }
      found.skills.push({ ...checked.fields, path, dir, source: source.label, files: listFiles(dir) });
    }
  }
  return found;
}

/** Why a skill folder is not read, or undefined. */
function refusal(
  dir: string,
  file: string,
  boundary: string,
  refuse: readonly string[],
  maxBytes: number,
): string | undefined {
  if (!inside(dir, boundary)) return `the folder resolves to ${dir}, outside ${boundary}`;
  const real = canonical(file);
  if (real === undefined || !inside(real, dir)) return `resolves outside its skill folder`;
  if (refuse.some((state) => inside(real, state)))
    return "is inside Rein's own state (sessions, grants, config)";
  const stat = statSync(real);
  if (!stat.isFile()) return "is not a regular file";
  if (stat.size > maxBytes) return `is ${stat.size} bytes (at most ${maxBytes})`;
  return undefined;
}

/** The files of a skill folder (relative, `/`-separated), for the model: no symlinks followed, bounded. */
function listFiles(dir: string): string[] {
  const files: string[] = [];
  const walk = (folder: string, depth: number) => {
    if (depth > MAX_DEPTH || files.length >= MAX_FILES) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (files.length >= MAX_FILES) return;
      if (entry.name.startsWith(".")) continue;
      const path = join(folder, entry.name);
      const stat = lstatSync(path);
      if (stat.isDirectory()) walk(path, depth + 1);
      else if (stat.isFile()) {
        const name = relative(dir, path).split(sep).join("/");
        if (name !== SKILL_FILE) files.push(name);
      }
    }
  };
  walk(dir, 0);
  return files;
}
