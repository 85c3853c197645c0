/**
 * The three message queues (spec "Queues"): steer, followUp, nextTurn.
 *
 * Invariants: a message accepted by a queue is either still queued or has been
 * handed to exactly one consumer; `restore` puts a drained batch back at the front
 * in its original order (a run that fails before injecting it loses nothing);
 * every change is reported through `onChange`. Each accepted message carries the id
 * of its `queue_push` journal record, so the session can say which ones it consumed.
 */
import type { UserMessage } from "@earendil-works/pi-ai";
import type { QueueName } from "../events/event-types.js";
import type { AgentMessage } from "../session/entries.js";

export type QueueMode = "one-at-a-time" | "all";

export interface QueueModes {
  steer: QueueMode;
  followUp: QueueMode;
}

export interface QueueContents {
  steer: AgentMessage[];
  followUp: AgentMessage[];
  nextTurn: AgentMessage[];
}

export function toUserMessage(message: string | AgentMessage): AgentMessage {
  if (typeof message !== "string") return message;
  const user: UserMessage = { role: "user", content: message, timestamp: Date.now() };
  return user;
}

/** One accepted message and the id of its `queue_push` journal record. */
export interface QueuedMessage {
  id: string;
  message: AgentMessage;
}

export class MessageQueues {
  private readonly queues: Record<QueueName, QueuedMessage[]> = { steer: [], followUp: [], nextTurn: [] };

  constructor(
    public modes: QueueModes,
    private readonly onChange: (queue: QueueName) => void,
  ) {}

  push(queue: QueueName, item: QueuedMessage): void {
    this.queues[queue].push(item);
    this.onChange(queue);
  }

  /** Takes what the queue's mode allows: one message, or all (nextTurn always gives all). */
  drain(queue: QueueName): QueuedMessage[] {
    const items = this.queues[queue];
    if (items.length === 0) return [];
    const mode = queue === "nextTurn" ? "all" : this.modes[queue];
    const taken = mode === "all" ? items.splice(0, items.length) : items.splice(0, 1);
    this.onChange(queue);
    return taken;
  }

  /** Puts messages back at the front, in the given order. */
  restore(queue: QueueName, items: readonly QueuedMessage[]): void {
    if (items.length === 0) return;
    this.queues[queue].unshift(...items);
    this.onChange(queue);
  }

  /** Empties the queue; returns what it held. */
  clear(queue: QueueName): QueuedMessage[] {
    const items = this.queues[queue];
    if (items.length === 0) return [];
    this.queues[queue] = [];
    this.onChange(queue);
    return items;
  }

  size(queue: QueueName): number {
    return this.queues[queue].length;
  }

  snapshot(): QueueContents {
    const messages = (queue: QueueName) => this.queues[queue].map((item) => item.message);
    return { steer: messages("steer"), followUp: messages("followUp"), nextTurn: messages("nextTurn") };
  }
}
