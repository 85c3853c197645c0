/**
 * Delivers events to listeners one at a time, in emission order, each listener
 * awaited before the next (spec: "Listeners are awaited in order").
 *
 * Invariant: deliveries never interleave. Every `emit` joins one FIFO chain, so an
 * event emitted from inside a listener (a reentrant `steer()` emitting
 * `queue_update`) is delivered after the current event, never inside it; and a
 * public API that emits never awaits delivery, so a listener calling it cannot
 * deadlock. A listener that throws is reported as `plugin_error` and delivery goes on.
 */
import { describeError, type HarnessError } from "../errors.js";
import type { PluginDriver } from "../hooks/plugin-driver.js";
import type { EventListener, EventType, HarnessEvent, ListenerOptions } from "./event-types.js";

interface Registration {
  listener: EventListener;
  type: EventType | undefined;
  owner: string;
}

/** Listener code runs through the harness's one plugin driver. */
export type EventBusDriver = Pick<PluginDriver, "runNow">;

const DELIVERED: Promise<void> = Promise.resolve();
const NO_OPTIONS = {};
/** `event:<type>`, the hook name a listener's failure is reported under, built once per type. */
const HOOKS = new Map<string, string>();
const hookOf = (type: string): string => {
  let hook = HOOKS.get(type);
  if (hook === undefined) {
    hook = `event:${type}`;
    HOOKS.set(type, hook);
  }
  return hook;
};

export class EventBus {
  private registrations: Registration[] = [];
  /** Listeners per event type, and for every type (`subscribe`): which events anyone wants. */
  private readonly typed = new Map<EventType, number>();
  private everyType = 0;
  private tail: Promise<void> = Promise.resolve();
  /** Deliveries queued and not yet finished. */
  private queued = 0;
  private releaseLast: (() => void) | undefined;

  constructor(private readonly driver: EventBusDriver) {}

  subscribe(listener: EventListener, options: ListenerOptions = {}): () => void {
    return this.add({ listener, type: undefined, owner: options.owner ?? "subscriber" });
  }

  on<K extends EventType>(
    type: K,
    listener: EventListener<Extract<HarnessEvent, { type: K }>>,
    options: ListenerOptions = {},
  ): () => void {
    return this.add({ listener: listener as EventListener, type, owner: options.owner ?? "subscriber" });
  }

  /**
   * Queues delivery; the promise resolves once every listener has seen the event.
   * An event of a type nobody listens to is not queued (most events of a turn when
   * only a few types are listened to, as a tracing plugin does): its promise is
   * the chain's tail, so awaiting it still waits for everything emitted before it.
   */
  emit(event: HarnessEvent): Promise<void> {
    if (this.everyType === 0 && this.typed.get(event.type) === undefined) {
      return this.queued === 0 ? DELIVERED : this.tail;
    }
    return this.enqueue(event);
  }

  private enqueue(event: HarnessEvent): Promise<void> {
    // Nobody listening and nothing queued: delivery would be a no-op, and order holds trivially.
    if (this.registrations.length === 0 && this.queued === 0) return DELIVERED;
    this.queued++;
    const delivery = this.tail
      .then(() => this.deliver(event))
      .finally(() => {
        this.queued--;
      });
    this.tail = delivery;
    return delivery;
  }

  /**
   * Like `emit`, for the last event of a phase (`settled`): later events wait
   * for its delivery as usual, unless `release()` is called meanwhile - a
   * listener that starts the next run (and awaits it) from `settled` must not
   * wait for its own delivery to finish, or both would hang.
   */
  emitLast(event: HarnessEvent): Promise<void> {
    // Always queued (whoever listens): the release below must also free a listener of an earlier event.
    const delivery = this.enqueue(event);
    if (this.tail !== delivery) return delivery; // nobody listening: nothing to release
    const released = new Promise<void>((resolve) => {
      this.releaseLast = resolve;
    });
    this.tail = Promise.race([delivery, released]).finally(() => {
      this.releaseLast = undefined;
    });
    return delivery;
  }

  /** Lets later events past a `settled` delivery still in progress (see `emitLast`). */
  release(): void {
    this.releaseLast?.();
  }

  /** Resolves when everything emitted so far has been delivered. */
  drain(): Promise<void> {
    return this.tail;
  }

  /** Surfaces a plugin failure a policy absorbed (a failing-closed gate, a skipped tap) as `plugin_error`. */
  report(failure: HarnessError): void {
    void this.emit({
      type: "plugin_error",
      plugin: failure.plugin ?? "unknown",
      hook: failure.hook ?? "unknown",
      message: failure.message,
      code: failure.pluginCode ?? failure.code,
      ...(failure.toolCallId ? { toolCallId: failure.toolCallId } : {}),
    });
  }

  get listenerCount(): number {
    return this.registrations.length;
  }

  private add(registration: Registration): () => void {
    // Copy-on-write: a delivery in progress keeps iterating the array it started with.
    this.registrations = [...this.registrations, registration];
    this.count(registration.type, 1);
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.registrations = this.registrations.filter((r) => r !== registration);
      this.count(registration.type, -1);
    };
  }

  private count(type: EventType | undefined, delta: 1 | -1): void {
    if (type === undefined) {
      this.everyType += delta;
      return;
    }
    const count = (this.typed.get(type) ?? 0) + delta;
    if (count === 0) this.typed.delete(type);
    else this.typed.set(type, count);
  }

  private async deliver(event: HarnessEvent): Promise<void> {
    const registrations = this.registrations;
    for (const registration of registrations) {
      if (registration.type !== undefined && registration.type !== event.type) continue;
      try {
        const answer = this.driver.runNow(
          { plugin: registration.owner, hook: hookOf(event.type) },
          NO_OPTIONS,
          registration.listener,
          undefined,
          event,
        );
        // Only a listener still working is awaited: a synchronous one costs no microtask.
        if (answer instanceof Promise) await answer;
      } catch (error) {
        if (event.type === "plugin_error") continue; // never report a failing error reporter in a loop
        const failure = error as { plugin?: string; code?: string; toolCallId?: string };
        // Reported inline (not re-queued) so the report comes right after the failing delivery.
        await this.deliver({
          type: "plugin_error",
          plugin: failure.plugin ?? registration.owner,
          hook: `event:${event.type}`,
          message: describeError(error),
          code: failure.code ?? "hook",
        });
      }
    }
  }
}
