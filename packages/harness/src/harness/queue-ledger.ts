/**
 * The queue ledger: the three message queues plus the durable record of what
 * happened to every queued message (spec "Queues", "Durable runs").
 *
 * Invariants: a message is journaled (`queue_push`) before it is queued, so it
 * is durable once `steer` / `followUp` / `nextTurn` returns; a message taken
 * from a queue is remembered (by identity: each push is a fresh object) until
 * the session persists it, and its entry carries the queue id; at settle, a
 * message taken but never persisted goes back to the front of its queue; ids a
 * `beforeRun` tap consumed without a message are recorded on the run's first
 * persisted message (or journaled as taken at settle).
 */
import type { HarnessEvent, QueueName } from "../events/event-types.js";
import type { AgentMessage, JournalRecord } from "../session/entries.js";
import { MessageQueues, type QueuedMessage, type QueueModes, toUserMessage } from "./message-queues.js";
import { durableId } from "./session-writer.js";

export const QUEUE_NAMES: readonly QueueName[] = ["steer", "followUp", "nextTurn"];

/** What the ledger needs of the harness. */
export interface LedgerPort {
  /** A journal record that must be written (throws when the session cannot take it). */
  journal(record: JournalRecord): void;
  journalQuietly(record: JournalRecord): void;
  emit(event: HarnessEvent): Promise<void>;
}

export class QueueLedger {
  private readonly queues: MessageQueues;
  /** Messages taken from a queue and not yet persisted. */
  private readonly taken = new Map<AgentMessage, { queue: QueueName; id: string }>();
  /** Ids of queued messages a `beforeRun` tap replaced: recorded on the run's first persisted message. */
  private consumedIds: string[] | undefined;

  constructor(
    modes: QueueModes,
    private readonly port: LedgerPort,
  ) {
    this.queues = new MessageQueues(modes, (queue) => {
      void port.emit({ type: "queue_update", queue, ...this.queues.snapshot() });
    });
  }

  get modes(): QueueModes {
    return this.queues.modes;
  }

  size(queue: QueueName): number {
    return this.queues.size(queue);
  }

  /** Journals the message (durable once this returns), then queues it. */
  enqueue(queue: QueueName, input: string | AgentMessage): void {
    // A fresh object per push: the ledger knows a queued message by identity.
    const message = { ...toUserMessage(input) } as AgentMessage;
    const id = durableId();
    this.port.journal({ event: "queue_push", queue, queueId: id, message });
    this.queues.push(queue, { id, message });
  }

  /** Messages restored by recovery, at the front of their queue. */
  restore(queue: QueueName, items: readonly QueuedMessage[]): void {
    this.queues.restore(queue, items);
  }

  /** Drains a queue, remembering each message until it is persisted. */
  take(queue: QueueName): QueuedMessage[] {
    const items = this.queues.drain(queue);
    for (const item of items) this.taken.set(item.message, { queue, id: item.id });
    return items;
  }

  /** A run that never started (blocked, failed in `beforeRun`): the next-turn messages go back untouched. */
  putBack(queue: QueueName, items: readonly QueuedMessage[]): void {
    for (const item of items) this.taken.delete(item.message);
    this.queues.restore(queue, items);
  }

  /** `beforeRun` dropped or replaced these: they count as consumed by the run. */
  consumed(items: readonly QueuedMessage[]): void {
    if (items.length === 0) return;
    for (const item of items) this.taken.delete(item.message);
    this.consumedIds = items.map((item) => item.id);
  }

  /** The queue ids a message about to be persisted consumes (its own, and a run's consumed ones). */
  persisting(message: AgentMessage): string[] | undefined {
    const tag = this.taken.get(message);
    let ids: string[] | undefined = tag === undefined ? undefined : [tag.id];
    if (this.consumedIds !== undefined) ids = [...this.consumedIds, ...(ids ?? [])];
    if (tag !== undefined) this.taken.delete(message);
    this.consumedIds = undefined;
    return ids;
  }

  /** At settle: what was taken and never persisted goes back, in order; consumed ids are journaled. */
  settle(): void {
    if (this.consumedIds !== undefined) {
      this.port.journalQuietly({ event: "queue_take", queue: "nextTurn", queueIds: this.consumedIds });
      this.consumedIds = undefined;
    }
    if (this.taken.size === 0) return;
    const back: Record<QueueName, QueuedMessage[]> = { steer: [], followUp: [], nextTurn: [] };
    for (const [message, { queue, id }] of this.taken) back[queue].push({ id, message });
    this.taken.clear();
    for (const queue of QUEUE_NAMES) this.queues.restore(queue, back[queue]);
  }

  /** `abort()`: steer and followUp are emptied (journaled), nextTurn is kept. */
  clearOnAbort(): void {
    for (const queue of ["steer", "followUp"] as const) {
      const cleared = this.queues.clear(queue);
      if (cleared.length > 0) {
        this.port.journalQuietly({ event: "queue_clear", queue, queueIds: cleared.map((item) => item.id) });
      }
    }
  }
}
