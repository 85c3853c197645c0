/**
 * Whether a worker's event loop has room for more runs: the fetch loop asks before
 * each fetch, and takes jobs only once the loop was busy for less than `busyShare`
 * of a recent window, a few at a time (`batch`).
 *
 * Why: every run of a worker shares one event loop, and a run's own work (opening
 * its session, building the request, taking the answer in, settling) is a few ms of
 * it. Taking all free slots at once starts that many runs together; their requests
 * go out one after another as the loop gets to them, their answers come back
 * together, and the next batch starts while they are taken in. The runs then move
 * in waves, and a run waits for the loop on both ends of every wave (about 0.4 s of
 * a 2 s run at 200 runs in flight, docs/benchmarks.md). Admitted as the loop has
 * room, the runs spread out over the model's latency and each finds the loop
 * nearly free; a worker whose loop is saturated leaves the job to another worker.
 *
 * Invariants: an idle worker (no run held) is never held back; a wait ends once the
 * loop was below `busyShare` over a window of at least `windowMs`, or after
 * `maxWaitMs` whatever the load (a busy worker still takes a batch that often), or
 * as soon as `stopping()` says so.
 */
import { performance } from "node:perf_hooks";

/** The clock and the loop's busy time (Node's `performance`, or a test's). */
export interface LoopClockPort {
  /** Milliseconds, monotonic. */
  now(): number;
  /** The loop's busy time so far, in ms (active, as `eventLoopUtilization` counts it). */
  busyMs(): number;
  sleep(ms: number): Promise<void>;
}

export interface AdmissionSettings {
  /** The loop's busy share (0-1) under which more runs are admitted. */
  busyShare: number;
  /** The shortest window the busy share is measured over, ms. */
  windowMs: number;
  /** The longest a fetch is held back, ms. */
  maxWaitMs: number;
  /** The most jobs one fetch takes. */
  batch: number;
}

/** Measured defaults (docs/benchmarks.md, "Runs admitted as the loop has room"). */
export const ADMISSION_DEFAULTS: AdmissionSettings = {
  busyShare: 0.75,
  windowMs: 10,
  maxWaitMs: 250,
  batch: 16,
};

const nodeLoopClock: LoopClockPort = {
  now: () => performance.now(),
  busyMs: () => performance.eventLoopUtilization().active,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export class LoopAdmission {
  readonly #settings: AdmissionSettings;
  readonly #clock: LoopClockPort;
  /** Where the current window starts: time and busy time then. */
  #mark: { at: number; busy: number };

  constructor(settings: AdmissionSettings = ADMISSION_DEFAULTS, clock: LoopClockPort = nodeLoopClock) {
    this.#settings = settings;
    this.#clock = clock;
    this.#mark = { at: clock.now(), busy: clock.busyMs() };
  }

  /** How many jobs the next fetch may take, with `free` slots free. */
  batchFor(free: number): number {
    return Math.min(free, this.#settings.batch);
  }

  /**
   * Resolves when another batch may be fetched. `running`: runs held now (none: at
   * once). Returns the ms it waited.
   */
  async wait(running: number, stopping: () => boolean): Promise<number> {
    const { busyShare, windowMs, maxWaitMs } = this.#settings;
    const clock = this.#clock;
    const started = clock.now();
    for (;;) {
      if (running === 0 || stopping()) break;
      const at = clock.now();
      const elapsed = at - this.#mark.at;
      if (elapsed >= windowMs) {
        const share = (clock.busyMs() - this.#mark.busy) / elapsed;
        if (share < busyShare) break;
        // Busy: the next window starts now.
        this.#mark = { at, busy: clock.busyMs() };
      }
      const left = maxWaitMs - (at - started);
      if (left <= 0) break;
      await clock.sleep(Math.min(left, windowMs - Math.max(0, at - this.#mark.at)));
    }
    const end = clock.now();
    this.#mark = { at: end, busy: clock.busyMs() };
    return end - started;
  }
}
