/**
 * The child agents' sessions of a session (the `task` tool's, `startChild`'s), for
 * the inspection commands: read-only, by the parent's tool call that started each,
 * in creation order. A JSONL session's children live in `children/<id>/` beside it;
 * other stores have none.
 */
import { childSessionFiles, JsonlStorage, Session, type SessionParent } from "@rein/harness";

export interface ChildSession {
  link: SessionParent;
  session: Session;
}

export class ChildSessions {
  readonly #byCall = new Map<string, ChildSession[]>();
  readonly #opened: Session[] = [];

  /** Opens the children of `session` (and of theirs, as they are asked for). */
  constructor(session: Session) {
    for (const file of childSessionFiles(session.storage.path, session.id)) {
      let child: Session;
      try {
        child = Session.open(JsonlStorage.open(file, { readOnly: true }));
      } catch {
        continue; // unreadable: the parent is still shown
      }
      this.#opened.push(child);
      const link = child.header.parent;
      if (!link || link.sessionId !== session.id) continue;
      const list = this.#byCall.get(link.toolCallId) ?? [];
      list.push({ link, session: child });
      this.#byCall.set(link.toolCallId, list);
    }
  }

  /** The children started by one tool call. */
  of(toolCallId: string): readonly ChildSession[] {
    return this.#byCall.get(toolCallId) ?? [];
  }

  get size(): number {
    return this.#opened.length;
  }

  close(): void {
    for (const session of this.#opened.splice(0)) session.close();
  }
}

/** Runs `body` with the children of `session` open, and closes them after. */
export function withChildSessions<T>(session: Session, body: (children: ChildSessions) => T): T {
  const children = new ChildSessions(session);
  try {
    return body(children);
  } finally {
    children.close();
  }
}
