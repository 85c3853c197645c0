/**
 * Walk exclusions: how a path rule reaches inside a walk. A policy that denies
 * `read(.env)` publishes an exclusion; every walking tool (grep, find, ls) asks
 * `excluded(...)` for each entry it would list or read and leaves matches out, so
 * `grep` over the tree never reaches what `read` may not.
 *
 * Invariant: an entry is checked under both spellings (the path as walked and
 * where it really leads), so a symlink to an excluded file is excluded too; an
 * exclusion that throws excludes (fail closed).
 */
import { sharedService } from "../harness-services.js";
import { OwnedEntries } from "../owned-entries.js";

/** One entry of a walk: the walking tool, the path as walked and its real location. */
export interface WalkEntry {
  tool: string;
  /** Absolute path as the walk reached it (symlinks not resolved). */
  walked: string;
  /** Relative to the project root, `/` separators, as the walk reached it. */
  relative: string;
  /** Canonical (symlinks resolved) relative to the project root. */
  realRelative: string;
  /** Canonical absolute path. */
  absolute: string;
  /** The walking tool's real root (rules are also matched relative to it). */
  root?: string;
}

/** Returns why the entry is hidden (a rule's name), or undefined to keep it. */
export type WalkExclusion = (entry: WalkEntry) => string | undefined;

export interface WalkExclusions {
  /** Adds an exclusion; returns its remover. */
  add(owner: string, exclusion: WalkExclusion): () => void;
  /** Why the entry is hidden (`<owner>: <reason>`), or undefined. */
  excluded(entry: WalkEntry): string | undefined;
  readonly size: number;
}

const KEY = Symbol("rein.walk-exclusions");

function createWalkExclusions(): WalkExclusions {
  const list = new OwnedEntries<WalkExclusion>();
  return {
    add: (owner, exclusion) => list.add(owner, exclusion),
    excluded(entry) {
      for (const { owner, value: exclusion } of list) {
        let why: string | undefined;
        try {
          why = exclusion(entry);
        } catch (error) {
          why = `exclusion failed (${error instanceof Error ? error.message : String(error)})`;
        }
        if (why !== undefined) return `${owner}: ${why}`;
      }
      return undefined;
    },
    get size() {
      return list.size;
    },
  };
}

/** The walk exclusions of the harness `owner` (a plugin's `rein`, or a harness) belongs to. */
export function walkExclusions(owner: object): WalkExclusions {
  return sharedService(owner, KEY, createWalkExclusions);
}
