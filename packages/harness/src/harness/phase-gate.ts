/**
 * The phase gate (spec "Phases"): structural operations take the phase
 * synchronously (or fail with `busy`), and finishing returns to idle, then emits
 * `settled`, then releases the idle waiters.
 *
 * Invariants: at most one structural operation holds the phase; `settled` is
 * the last event of a phase; `waitForIdle()` resolves only after it; a
 * `settled` listener may start (and await) the next operation without a
 * deadlock: taking the phase releases the event chain past that delivery.
 */
import { busyError } from "../errors.js";
import type { HarnessEvent } from "../events/event-types.js";

export type Phase = "idle" | "turn" | "compaction" | "branch";

/** What the gate needs of the event bus. */
export interface PhaseEventsPort {
  emitLast(event: HarnessEvent): Promise<void>;
  release(): void;
}

export class PhaseGate {
  private current: Phase = "idle";
  private idle: Promise<void> = Promise.resolve();
  private resolveIdle: (() => void) | undefined;

  constructor(private readonly events: PhaseEventsPort) {}

  get phase(): Phase {
    return this.current;
  }

  /** Takes the phase or throws `busy` (synchronously: before the caller's first await). */
  take(phase: Exclude<Phase, "idle">, operation: string): void {
    if (this.current !== "idle") throw busyError(operation, this.current);
    this.current = phase;
    // Started from a `settled` listener: this phase's events must not wait for that listener.
    this.events.release();
    this.idle = new Promise((resolve) => {
      this.resolveIdle = resolve;
    });
  }

  /** Back to idle, then `settled`, then the idle waiters (a `settled` listener may already start a new phase). */
  async finish(runId?: string): Promise<void> {
    const resolve = this.resolveIdle;
    this.resolveIdle = undefined;
    this.current = "idle";
    await this.events.emitLast(runId === undefined ? { type: "settled" } : { type: "settled", runId });
    resolve?.();
  }

  waitForIdle(): Promise<void> {
    return this.idle;
  }
}
