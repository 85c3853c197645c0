/**
 * A worker's run slots: one fetch loop that fills the free slots of `concurrency`
 * with prompt jobs, in one query per fill, and settles each job when its run ends.
 *
 * Why not pg-boss `work({ localConcurrency: N })`: that is N loops of one job each,
 * and every idle loop polls on its own and wakes on every NOTIFY, so an idle worker
 * with 200 slots sent 400 fetch queries a second at `--poll 0.5` (and four of them
 * four times as many), which on a shared database cost more than the runs
 * themselves (docs/benchmarks.md, "Concurrent runs per worker").
 *
 * Invariants:
 * - At most `concurrency` jobs held at once: a fetch asks for at most the free slots
 *   (and at most the admission's batch), and none while there are none (back-pressure:
 *   a full worker takes no job).
 * - A worker holding runs fetches only once its event loop has room for more, or after
 *   the admission's longest wait (`LoopAdmission`); an idle one is never held back.
 * - A fetch follows when a slot frees, when a job is sent (pg-boss's NOTIFY
 *   on the queue, heard on a listener of our own), when the listener reconnects (what
 *   was sent meanwhile), and every `pollSeconds` otherwise (jobs sent back with a
 *   delay, a listener that is down).
 * - A run is aborted once its job is past `expireInSeconds` (pg-boss retries it).
 * - Each job held is heartbeated (pg-boss `touch`, fenced to the attempt fetched) every
 *   half `heartbeatSeconds`; a job the heartbeat no longer holds (expired, retried
 *   elsewhere) has its run's signal aborted, as pg-boss's own workers do.
 * - A run's result completes its job (those ending together in one statement,
 *   job-completions.ts); a run that throws fails it (pg-boss retries it);
 *   jobs fetched as `stop()` began are failed at once (retried elsewhere). A job is
 *   settled once, by the attempt that fetched it.
 */
import type { Job, PgBoss } from "pg-boss";
import { JobCompletions } from "./job-completions.js";
import { LoopAdmission } from "./loop-admission.js";
import { PROMPT_QUEUE, QUEUE_SCHEMA } from "./prompt-queue.js";

export interface SlotSettings {
  concurrency: number;
  /** Seconds between fetches while nothing else wakes the loop. */
  pollSeconds: number;
  /** The queue's heartbeat in seconds: jobs held are touched every half of it. */
  heartbeatSeconds: number;
  /** Errors of the loop, the listener and the heartbeat (the loop goes on). */
  onError: (error: Error) => void;
}

/** Runs one job; resolves with the job's output (completes it) or throws (fails it). */
export type RunJob<T> = (job: Job<T>, signal: AbortSignal) => Promise<object>;

/**
 * The channel pg-boss NOTIFYs on when a job is sent to a notify-enabled queue in
 * `schema`: pg-boss's own expression (plans.notifyChannelSql, not exported), so the
 * database computes the same name for both sides.
 */
export function notifyChannelSql(schema: string): string {
  return `('pgboss_' || left(encode(sha224('${schema}'::bytea), 'hex'), 24))`;
}

interface Held {
  job: Job<unknown>;
  controller: AbortController;
  settled: Promise<void>;
}

export class JobSlots<T> {
  readonly #boss: PgBoss;
  readonly #settings: SlotSettings;
  readonly #run: RunJob<T>;
  readonly #held = new Map<string, Held>();
  readonly #completions: JobCompletions;
  readonly #admission: LoopAdmission;
  #stopping = false;
  #woken = false;
  #wake: (() => void) | undefined;
  #loop: Promise<void> | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #listener: { close(): Promise<void> } | undefined;

  constructor(boss: PgBoss, settings: SlotSettings, run: RunJob<T>) {
    this.#boss = boss;
    this.#settings = settings;
    this.#run = run;
    this.#completions = new JobCompletions(boss);
    this.#admission = new LoopAdmission();
  }

  /** Jobs held now. */
  get size(): number {
    return this.#held.size;
  }

  /** Starts listening and fetching. */
  async start(): Promise<void> {
    this.#listener = await this.#listen();
    const beat = Math.max(1, this.#settings.heartbeatSeconds / 2) * 1000;
    this.#heartbeat = setInterval(() => void this.#touch(), beat);
    this.#loop = this.#fetchLoop();
  }

  /** Takes no more jobs; resolves once the loop is out (runs in flight go on). */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#poke();
    await this.#loop;
    await this.#listener?.close().catch(() => undefined);
    this.#listener = undefined;
  }

  /** Resolves when every job held now is settled (completed or failed). */
  settled(): Promise<void> {
    return Promise.all([...this.#held.values()].map((held) => held.settled)).then(() => undefined);
  }

  /** Stops the heartbeat: after `stop()` and the runs, or when exiting without them. */
  close(): void {
    if (this.#heartbeat) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  async #listen(): Promise<{ close(): Promise<void> } | undefined> {
    const db = this.#boss.getDb();
    if (typeof db.listen !== "function") return undefined;
    try {
      const { rows } = await db.executeSql(`SELECT ${notifyChannelSql(QUEUE_SCHEMA)} AS channel`);
      const channel = (rows[0] as { channel: string }).channel;
      return await db.listen(
        channel,
        (payload) => {
          if (payload === PROMPT_QUEUE) this.#poke();
        },
        () => this.#poke(),
      );
    } catch (error) {
      // Polling still finds every job, only later.
      this.#settings.onError(error as Error);
      return undefined;
    }
  }

  #poke(): void {
    this.#woken = true;
    this.#wake?.();
  }

  async #fetchLoop(): Promise<void> {
    const { concurrency, pollSeconds } = this.#settings;
    while (!this.#stopping) {
      this.#woken = false;
      const free = concurrency - this.#held.size;
      if (free > 0) {
        // Runs are admitted as the event loop has room, a batch at a time (loop-admission.ts).
        await this.#admission.wait(this.#held.size, () => this.#stopping);
        if (this.#stopping) break;
        const wanted = this.#admission.batchFor(free);
        let jobs: Job<T>[] = [];
        try {
          jobs = await this.#boss.fetch<T>(PROMPT_QUEUE, { batchSize: wanted });
        } catch (error) {
          this.#settings.onError(error as Error);
        }
        if (this.#stopping) {
          // Fetched as the worker began to stop: failed at once, so they are retried elsewhere.
          if (jobs.length > 0)
            await this.#boss
              .fail(
                PROMPT_QUEUE,
                jobs.map((job) => ({ id: job.id, retryCount: job.retryCount })),
                { message: "the worker is stopping" },
              )
              .catch((error: Error) => this.#settings.onError(error));
          break;
        }
        for (const job of jobs) this.#begin(job);
        // As many as asked for: more may be waiting, fetch again (once the loop has room).
        if (jobs.length > 0 && jobs.length === wanted) continue;
      }
      if (this.#woken || this.#stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollSeconds * 1000);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = undefined;
    }
  }

  #begin(job: Job<T>): void {
    const controller = new AbortController();
    const attempt = { id: job.id, retryCount: job.retryCount };
    // Past its expiry the job is pg-boss's to retry: the run stops, as under pg-boss's own workers.
    const expiry =
      job.expireInSeconds > 0 ? setTimeout(() => controller.abort(), job.expireInSeconds * 1000) : undefined;
    const settled = (async () => {
      try {
        let output: object;
        try {
          output = await this.#run(job, controller.signal);
        } catch (error) {
          await this.#boss.fail(PROMPT_QUEUE, attempt, { message: (error as Error).message });
          return;
        }
        await this.#completions.complete(attempt, output);
      } catch (error) {
        // Not settled (the database is away): the job's heartbeat stops with it, and it is retried.
        this.#settings.onError(error as Error);
      } finally {
        clearTimeout(expiry);
        this.#held.delete(job.id);
        this.#poke();
      }
    })();
    this.#held.set(job.id, { job: job as Job<unknown>, controller, settled });
  }

  async #touch(): Promise<void> {
    const held = [...this.#held.values()].filter((h) => !h.controller.signal.aborted);
    if (held.length === 0) return;
    let settled: string[] | undefined;
    try {
      const touched = await this.#boss.touch(
        PROMPT_QUEUE,
        held.map((h) => ({ id: h.job.id, retryCount: h.job.retryCount })),
      );
      settled = (touched as { settled?: string[] }).settled;
    } catch (error) {
      // A heartbeat that could not run says nothing about the claims: nothing is aborted.
      this.#settings.onError(error as Error);
      return;
    }
    if (settled === undefined) return;
    const refreshed = new Set(settled);
    for (const h of held) {
      // Settled by its own run meanwhile, or no longer ours: only a run still held is told.
      if (!refreshed.has(h.job.id) && this.#held.get(h.job.id) === h) h.controller.abort();
    }
  }
}
