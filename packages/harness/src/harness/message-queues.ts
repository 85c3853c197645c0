/**
 * The three message queues (spec "Queues"): steer, followUp, nextTurn.
 *
 * Invariants: a message accepted by a queue is either still queued or has been
 * handed to exactly one consumer; `restore` puts a drained batch back at the front
 * in its original order (a run that fails before injecting it loses nothing);
 * every change is reported through `onChange`.
 */
import type { UserMessage } from "@mariozechner/pi-ai";
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

export class MessageQueues {
  private readonly queues: QueueContents = { steer: [], followUp: [], nextTurn: [] };

  constructor(
    public modes: QueueModes,
    private readonly onChange: (queue: QueueName) => void,
  ) {}

  push(queue: QueueName, message: AgentMessage): void {
    this.queues[queue].push(message);
    this.onChange(queue);
  }

  /** Takes what the queue's mode allows: one message, or all (nextTurn always gives all). */
  drain(queue: QueueName): AgentMessage[] {
    const items = this.queues[queue];
    if (items.length === 0) return [];
    const mode = queue === "nextTurn" ? "all" : this.modes[queue];
    const taken = mode === "all" ? items.splice(0, items.length) : items.splice(0, 1);
    this.onChange(queue);
    return taken;
  }

  restore(queue: QueueName, messages: AgentMessage[]): void {
    if (messages.length === 0) return;
    this.queues[queue].unshift(...messages);
    this.onChange(queue);
  }

  clear(queue: QueueName): void {
    if (this.queues[queue].length === 0) return;
    this.queues[queue] = [];
    this.onChange(queue);
  }

  size(queue: QueueName): number {
    return this.queues[queue].length;
  }

  snapshot(): QueueContents {
    return {
      steer: [...this.queues.steer],
      followUp: [...this.queues.followUp],
      nextTurn: [...this.queues.nextTurn],
    };
  }
}
