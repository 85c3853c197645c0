/**
 * The requests of a session still queued (or held by a worker) that were submitted
 * before a given job: what a worker runs first, holding the session (session-jobs.ts).
 *
 * One query per batch, not per job: the first lookup goes at once, and those asked for
 * while a query is under way go together in the next one (the job table has no index
 * on a job's session, so each query reads every waiting job: per job, that was
 * quadratic in the queue's length on the database the runs share).
 *
 * Invariants: a lookup's answer is what its own query would have returned: the rows of
 * its session in state created, retry or active, submitted strictly before it, in the
 * order (submittedAt, created_on), itself excluded, anything parsePromptJob refuses
 * left out. Ordering and filtering happen here, not in SQL, so one malformed row
 * (a submittedAt that is no number) cannot fail the lookups of other sessions.
 */
import type pg from "pg";
import { PROMPT_QUEUE, type PromptJob, parsePromptJob, QUEUE_SCHEMA } from "./prompt-queue.js";

interface Lookup {
  job: PromptJob;
  resolve: (jobs: PromptJob[]) => void;
  reject: (error: Error) => void;
}

interface Row {
  job: PromptJob;
  createdOn: number;
}

class EarlierRequests {
  readonly #queue: pg.Pool;
  #pending: Lookup[] = [];
  #querying: Promise<void> | undefined;

  constructor(queue: pg.Pool) {
    this.#queue = queue;
  }

  before(job: PromptJob): Promise<PromptJob[]> {
    return new Promise<PromptJob[]>((resolve, reject) => {
      this.#pending.push({ job, resolve, reject });
      this.#querying ??= this.#query();
    });
  }

  async #query(): Promise<void> {
    while (this.#pending.length > 0) {
      const batch = this.#pending;
      this.#pending = [];
      let rows: Row[];
      try {
        rows = await this.#rows([...new Set(batch.map((lookup) => lookup.job.sessionId))]);
      } catch (error) {
        for (const lookup of batch) lookup.reject(error as Error);
        continue;
      }
      for (const { job, resolve } of batch)
        resolve(
          rows
            .filter(
              (row) =>
                row.job.sessionId === job.sessionId &&
                row.job.submittedAt < job.submittedAt &&
                row.job.requestId !== job.requestId,
            )
            .map((row) => row.job),
        );
    }
    // In the same step that found nothing pending (no await between): a lookup asked for next starts a query.
    this.#querying = undefined;
  }

  /** The waiting and held prompt jobs of these sessions, in (submittedAt, created_on) order. */
  async #rows(sessionIds: string[]): Promise<Row[]> {
    const { rows } = await this.#queue.query<{ data: unknown; created_on: Date }>(
      `SELECT data, created_on FROM ${QUEUE_SCHEMA}.job
        WHERE name = $1 AND state IN ('created', 'retry', 'active') AND data->>'sessionId' = ANY($2::text[])`,
      [PROMPT_QUEUE, sessionIds],
    );
    const parsed: Row[] = [];
    for (const row of rows) {
      const job = parsePromptJob(row.data);
      if (!("refused" in job)) parsed.push({ job, createdOn: new Date(row.created_on).getTime() });
    }
    return parsed.sort((a, b) => a.job.submittedAt - b.job.submittedAt || a.createdOn - b.createdOn);
  }
}

const byPool = new WeakMap<pg.Pool, EarlierRequests>();

/** The session's requests still queued (or held by a worker) that were submitted before `job`. */
export function queuedBefore(queue: pg.Pool, job: PromptJob): Promise<PromptJob[]> {
  let earlier = byPool.get(queue);
  if (!earlier) {
    earlier = new EarlierRequests(queue);
    byPool.set(queue, earlier);
  }
  return earlier.before(job);
}
