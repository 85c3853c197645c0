/**
 * Protected files (invariant 4): Rein's own files that no file tool may write -
 * the config file and the local plugin files a host loaded, sessions, the audit
 * log. The host (the CLI) adds what it loaded; file tools check every write.
 *
 * Invariant: entries are stored canonically (symlinks resolved), and a check is on
 * a canonical path, so no spelling reaches a protected file; a directory entry
 * protects everything below it.
 */
import { sharedService } from "../harness-services.js";
import { OwnedEntries } from "../owned-entries.js";
import { isInside, realpathLoose } from "./resolve.js";

export interface ProtectedFiles {
  /** Protects files or directories (absolute paths); returns the remover. */
  add(owner: string, paths: readonly string[]): () => void;
  /** Who protects this canonical absolute path, or undefined. */
  protectedBy(absolute: string): string | undefined;
}

const KEY = Symbol("rein.protected-files");

function createProtectedFiles(): ProtectedFiles {
  const entries = new OwnedEntries<string>();
  return {
    add: (owner, paths) => entries.add(owner, ...paths.map((p) => realpathLoose(p))),
    protectedBy(absolute) {
      for (const { owner, value: path } of entries) if (isInside(path, absolute)) return owner;
      return undefined;
    },
  };
}

/** The protected files of the harness `owner` (a plugin's `rein`, or a harness) belongs to. */
export function protectedFiles(owner: object): ProtectedFiles {
  return sharedService(owner, KEY, createProtectedFiles);
}
