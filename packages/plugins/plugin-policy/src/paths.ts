/**
 * Path rules over canonical paths (security invariant 2). A call whose tool
 * declares path arguments carries `facts.paths` (resolved once by the SDK's
 * resolver); this module turns them into the units rules are matched against,
 * and publishes the deny/ask rules as walk exclusions so grep, find and ls never
 * list or read what a rule keeps from `read`.
 *
 * Invariants:
 * - a deny or ask rule matches a path under any spelling that reaches it: the
 *   canonical path (symlinks resolved) relative to the policy root and relative to
 *   the tool's root, the canonical absolute path, and the lexical spelling the model
 *   gave, resolved where the tool resolved it. Every one of these is derived from the
 *   file the tool will touch, so each spelling of one file gets one verdict, whichever
 *   roots the policy and the tool use;
 * - an allow rule counts only on the canonical spelling, so `src/link -> ../.env`
 *   is never allowed by `write(src/**)`;
 * - a deny or ask rule written for `read` with a path pattern applies to every call
 *   that touches the path (any tool with path facts), and through the exclusions to
 *   every walk entry; a bare `read` rule is about the read tool only.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import type { ResolvedPathFacts, WalkEntry } from "@rein/sdk";
import { parseSpec } from "./grammar.js";
import type { CompiledRule } from "./rules.js";

/** Where paths are resolved (`cwd`, as tools do) and what they are matched relative to (`root`). */
export interface Where {
  readonly cwd: string;
  readonly root: string;
}

/** One path a rule is checked against. `canonical`: the spellings an allow rule must match. */
export interface PathUnit {
  readonly display: string;
  readonly candidates: readonly string[];
  readonly canonical: readonly string[];
}

const slash = (p: string) => p.split(path.sep).join("/");

function realRoot(root: string): string {
  try {
    return realpathSync.native(root);
  } catch {
    return root; // a root that does not exist: lexical matching only
  }
}

/** `absolute` relative to `root` when inside it (`.` for the root), plus the absolute path itself. */
function spellings(absolute: string, root: string): string[] {
  const relative = path.relative(root, absolute);
  const out: string[] = [];
  if (relative === "") out.push(".");
  else if (!relative.startsWith("..") && !path.isAbsolute(relative)) out.push(slash(relative));
  out.push(slash(absolute));
  return out;
}

/**
 * A path (resolved against `cwd`, like the tools resolve it) relative to the root
 * (`src/a.ts`, `.` for the root itself; `..` segments resolved) when it lies inside
 * the root, and always the absolute path, with `/` separators. Lexical only: no
 * symlink is followed (see `factUnits` for the canonical form).
 */
export function pathCandidates(given: string, root: string, cwd: string = root): string[] {
  return spellings(path.resolve(cwd, given), root);
}

/** `absolute` relative to `root` when it lies inside it (nothing otherwise). */
function inside(absolute: string, root: string | undefined): string[] {
  if (root === undefined) return [];
  const relative = path.relative(root, absolute);
  if (relative === "") return ["."];
  return relative.startsWith("..") || path.isAbsolute(relative) ? [] : [slash(relative)];
}

/** The units of a call's path facts: canonical spellings first, then the lexical ones. */
export function factUnits(facts: readonly ResolvedPathFacts[], where: Where): PathUnit[] {
  const root = realRoot(where.root);
  return facts.map((fact) => {
    const canonical = spellings(fact.absolute, root);
    // The model's spelling where the tool resolved it (its root), never against another base.
    const lexical = fact.lexical
      ? spellings(fact.lexical, where.root)
      : pathCandidates(fact.input, where.root, where.cwd);
    return {
      display: fact.input === fact.relative ? fact.input : `${fact.input} (${fact.relative})`,
      canonical,
      candidates: [...new Set([...canonical, ...inside(fact.absolute, fact.root), ...lexical])],
    };
  });
}

const scopedCache = new WeakMap<CompiledRule, boolean>();

/**
 * Whether a rule names paths (`read(.env)`, not a bare `read` or `read(*)`): only
 * such a rule is about files, and so reaches other tools touching them.
 */
export function isPathScoped(rule: CompiledRule): boolean {
  let scoped = scopedCache.get(rule);
  if (scoped === undefined) {
    const parsed = parseSpec(rule.spec);
    const pattern = typeof parsed === "string" ? undefined : parsed.pattern?.trim();
    scoped = pattern !== undefined && pattern !== "" && pattern !== "*" && pattern !== "**";
    scopedCache.set(rule, scoped);
  }
  return scoped;
}

/** The candidates of one walk entry: as walked and as real, relative to the policy root and absolute. */
export function entryCandidates(entry: WalkEntry, where: Where): string[] {
  const root = realRoot(where.root);
  return [
    ...new Set([
      ...spellings(entry.absolute, root),
      ...inside(entry.absolute, entry.root),
      ...spellings(entry.walked, root),
      ...pathCandidates(entry.walked, where.root, where.cwd),
    ]),
  ];
}

/**
 * The walk exclusion a rule set publishes: an entry is hidden when a deny or ask
 * rule for the walking tool or for `read` matches it under any spelling. Ask rules
 * hide too: nobody can be asked about each entry of a walk.
 */
export function walkExclusion(
  rules: readonly CompiledRule[],
  where: () => Where,
): (entry: WalkEntry) => string | undefined {
  const guarding = rules.filter((rule) => rule.decision !== "allow");
  return (entry) => {
    const candidates = entryCandidates(entry, where());
    const unit = { display: entry.relative, candidates };
    for (const rule of guarding) {
      if (!rule.appliesTo(entry.tool) && !(rule.appliesTo("read") && isPathScoped(rule))) continue;
      if (rule.matchUnit(unit, "path") !== undefined) return `${rule.label} (${rule.spec})`;
    }
    return undefined;
  };
}
