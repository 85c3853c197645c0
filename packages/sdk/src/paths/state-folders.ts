/**
 * Rein's state folders of a harness (invariant 4): folders a host keeps its own
 * state in wherever it configured them (a session dir outside `.rein/`, say), so
 * that a boundary that cannot know the host's config (the shell's sandbox) still
 * refuses to write them. The host (the CLI) adds them before plugins set up; the
 * user's config and cache dirs need no entry (every boundary knows them).
 */
import { sharedService } from "../harness-services.js";
import { OwnedEntries } from "../owned-entries.js";
import { realpathLoose } from "./resolve.js";

export interface StateFolders {
  /** Adds folders (absolute paths); returns the remover. */
  add(owner: string, paths: readonly string[]): () => void;
  /** Every folder added, canonical, in the order added. */
  list(): string[];
}

const KEY = Symbol("rein.state-folders");

function createStateFolders(): StateFolders {
  const entries = new OwnedEntries<string>();
  return {
    add: (owner, paths) => entries.add(owner, ...paths.map((p) => realpathLoose(p))),
    list: () => [...new Set([...entries].map((entry) => entry.value))],
  };
}

/** The state folders of the harness `owner` (a plugin's `rein`, or a harness) belongs to. */
export function stateFolders(owner: object): StateFolders {
  return sharedService(owner, KEY, createStateFolders);
}
