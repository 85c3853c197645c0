/**
 * Session writes made while the harness is busy (spec "Save points and pending
 * writes"). Invariant: FIFO, never dropped; a write leaves the queue only after
 * the session accepted it, so a failing append keeps it (and everything after it)
 * pending for the next flush. Each write has the id of its `pending_write` journal
 * record; the committed entry carries it as `pendingId`.
 */
import type { EntryInput } from "../session/entries.js";

export interface PendingWrite {
  input: EntryInput;
  id: string;
}

export interface EntrySink {
  append(input: EntryInput): unknown;
}

export class PendingWrites {
  private queue: PendingWrite[] = [];

  add(input: EntryInput, id: string): void {
    this.queue.push({ input, id });
  }

  get size(): number {
    return this.queue.length;
  }

  list(): readonly PendingWrite[] {
    return this.queue;
  }

  /** Appends every pending write in order; returns how many were written. Throws on the first failure. */
  flush(sink: EntrySink): number {
    let written = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0] as PendingWrite;
      sink.append({ ...next.input, pendingId: next.id });
      this.queue.shift();
      written++;
    }
    return written;
  }
}
