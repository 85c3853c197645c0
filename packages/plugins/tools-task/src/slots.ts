/**
 * A bound on how many children run at once. Waiters are served in arrival order
 * (the loop starts a turn's calls in call order), and an aborted wait leaves the
 * line without taking a slot.
 */
export class Slots {
  #free: number;
  readonly #waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(size: number) {
    this.#free = size;
  }

  /** Resolves with a release function once a slot is free. */
  async take(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw signal.reason ?? new Error("aborted");
    if (this.#free > 0) {
      this.#free--;
    } else {
      await new Promise<void>((resolve, reject) => {
        const waiter = {
          resolve: () => {
            signal.removeEventListener("abort", onAbort);
            resolve();
          },
          reject,
        };
        const onAbort = () => {
          const index = this.#waiting.indexOf(waiter);
          if (index >= 0) this.#waiting.splice(index, 1);
          reject(signal.reason ?? new Error("aborted"));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        this.#waiting.push(waiter);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next.resolve();
      else this.#free++;
    };
  }
}
