/**
 * Child sessions: where a child agent's entries live in the session tree.
 *
 * A child session is a session of its own (its own lock, snapshots, journal and
 * recovery) whose header names its parent: `parent: { sessionId, toolCallId,
 * agentPath }`. Beside a JSONL parent it is a file in `children/<parent id>/` of
 * the parent's directory: out of the store's own listing (so `--continue` never
 * resumes a child by mistake) and found again from the parent. Beside an
 * in-memory parent it is in memory too. Other storages have no child sessions
 * (an `invalid_argument` says so).
 */
import fs from "node:fs";
import path from "node:path";
import { invalidArgument } from "../errors.js";
import type { SessionParent } from "../session/entries.js";
import { JsonlStorage } from "../session/jsonl-storage.js";
import { MemoryStorage } from "../session/memory-storage.js";
import { Session } from "../session/session.js";
import { SessionStore } from "../session/session-store.js";
import { createSessionHeader } from "../session/storage.js";

/** The directory holding the child sessions of a JSONL session file. */
export function childDirOf(parentFile: string, parentId: string): string {
  return path.join(path.dirname(parentFile), "children", parentId);
}

/** Creates (and locks) a child session of `parent`, linked to its tool call. */
export function createChildSession(parent: Session, link: SessionParent): Session {
  const header = createSessionHeader(parent.header.cwd === undefined ? {} : { cwd: parent.header.cwd });
  header.parent = { ...link };
  if (parent.storage.kind === "memory") return Session.create(new MemoryStorage(header));
  if (parent.storage.kind === "jsonl" && parent.storage.path !== undefined) {
    const store = new SessionStore(childDirOf(parent.storage.path, parent.id));
    fs.mkdirSync(store.dir, { recursive: true });
    return Session.create(JsonlStorage.create(store.fileFor(header.id, header.createdAt), header));
  }
  throw invalidArgument(
    `child agents need a JSONL or in-memory parent session; session ${parent.id} is on ${parent.storage.kind} storage`,
  );
}

/** The child session files of a JSONL session (by creation time), or none. */
export function childSessionFiles(parentFile: string | undefined, parentId: string): string[] {
  if (parentFile === undefined) return [];
  const store = new SessionStore(childDirOf(parentFile, parentId));
  return store
    .list()
    .sort((a, b) => a.createdAt - b.createdAt || a.path.localeCompare(b.path))
    .map((summary) => summary.path);
}
