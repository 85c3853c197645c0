/**
 * Completes a worker's prompt jobs: the first at once, and those whose runs end while
 * a completion statement is under way together in the next one (one statement per
 * distinct output), instead of one statement and round trip per job.
 *
 * Invariants: each completion is fenced to the attempt that fetched the job (pg-boss
 * `complete` with `{ id, retryCount }`: a job retried elsewhere since is left alone), as
 * one `complete` per job was; a job's promise settles when the statement carrying it has
 * (rejected with that statement's error); no timer: nothing waits that could be sent.
 */
import type { PgBoss } from "pg-boss";
import { PROMPT_QUEUE } from "./prompt-queue.js";

export interface Attempt {
  id: string;
  retryCount: number;
}

interface Pending {
  attempt: Attempt;
  output: object;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class JobCompletions {
  readonly #boss: PgBoss;
  #pending: Pending[] = [];
  #sending: Promise<void> | undefined;

  constructor(boss: PgBoss) {
    this.#boss = boss;
  }

  /** Completes the attempt with `output`; resolves once stored. */
  complete(attempt: Attempt, output: object): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#pending.push({ attempt, output, resolve, reject });
      this.#sending ??= this.#send();
    });
  }

  async #send(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      // pg-boss stores one output for every job of a `complete` call: one call per output.
      const byOutput = new Map<string, Pending[]>();
      for (const pending of batch) {
        const key = JSON.stringify(pending.output);
        const group = byOutput.get(key);
        if (group) group.push(pending);
        else byOutput.set(key, [pending]);
      }
      await Promise.all(
        [...byOutput.values()].map(async (group) => {
          try {
            await this.#boss.complete(
              PROMPT_QUEUE,
              group.map((pending) => pending.attempt),
              (group[0] as Pending).output,
            );
          } catch (error) {
            for (const pending of group) pending.reject(error as Error);
            return;
          }
          for (const pending of group) pending.resolve();
        }),
      );
    }
    // In the same step that found nothing pending (no await between): a completion asked for next starts a statement.
    this.#sending = undefined;
  }
}
