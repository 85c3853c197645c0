/**
 * Session writes made while the harness is busy (spec "Save points and pending
 * writes"). Invariant: FIFO, never dropped; a write leaves the queue only after
 * the session accepted it, so a failing append keeps it (and everything after it)
 * pending for the next flush.
 */
import type { EntryInput } from "../session/entries.js";

export interface PendingWrite {
  input: EntryInput;
}

export interface EntrySink {
  append(input: EntryInput): unknown;
}

export class PendingWrites {
  private queue: PendingWrite[] = [];

  add(input: EntryInput): void {
    this.queue.push({ input });
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
      sink.append(next.input);
      this.queue.shift();
      written++;
    }
    return written;
  }
}
