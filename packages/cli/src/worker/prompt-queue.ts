/**
 * The prompt queue: prompt jobs in PostgreSQL through pg-boss (the event stream back
 * to whoever submitted them is in notices.ts, on the same database).
 *
 * Invariants: a job names its session and carries a `requestId` of its own (the
 * request's identity in the session, whatever pg-boss job carries it: a job may be
 * re-sent, never re-run, see session-jobs.ts) and its `submittedAt`, kept when it is
 * re-sent: requests of one session run in that order. A worker runs only a job of
 * this shape (parsePromptJob); anything else is refused with its reason.
 * A worker heartbeats each job it holds (pg-boss `heartbeatSeconds`, the worker's
 * `--lease`): a job whose worker died or froze is retried within that time.
 *
 * pg-boss 12 lives in a schema of Rein's own (QUEUE_SCHEMA). Rein before pg-boss 12 used
 * pg-boss 10 in the shared default schema `pgboss`, which pg-boss 12 cannot migrate
 * (its oldest starting point is pg-boss 11's schema); a worker moves the prompt jobs
 * still waiting there into the new queue when it starts (moveLegacyJobs).
 */
import { randomUUID } from "node:crypto";
import { isTraceparent } from "@rein/sdk";
import pg from "pg";
// Types only: pg-boss (with its OpenTelemetry, cron and rrule dependencies, ~110 ms to
// import on a quiet 2-core machine) loads when a queue is opened, not with @rein/cli.
import type { Db, PgBoss } from "pg-boss";

export const PROMPT_QUEUE = "rein-prompts";

/** The PostgreSQL schema holding Rein's pg-boss tables. */
export const QUEUE_SCHEMA = "rein_queue";

/** Where pg-boss 10 kept Rein's queue (its default schema, shared with other pg-boss 10 users). */
const LEGACY_SCHEMA = "pgboss";
/** pg-boss 10's schema version. */
const LEGACY_VERSION = 24;

export interface PromptJob {
  requestId: string;
  sessionId: string;
  prompt: string;
  /** When the request was first submitted (ms since the epoch): its place in its session's order. */
  submittedAt: number;
  /** How often the request was sent back to wait (its session parked, or busy): the next wait grows. */
  waits?: number;
  /** The submitter's W3C trace context: the run continues that trace (a tracing plugin's spans hang under it). */
  traceparent?: string;
}

/** The longest id a job may carry (ids are UUIDs; imported sessions keep theirs). */
const MAX_ID = 200;

/** The job as a worker may run it, or why not. Nothing about a refused job reaches a session. */
export function parsePromptJob(data: unknown): PromptJob | { refused: string } {
  if (typeof data !== "object" || data === null || Array.isArray(data))
    return { refused: "the job's data is not an object" };
  const job = data as Record<string, unknown>;
  for (const key of ["requestId", "sessionId"] as const) {
    const value = job[key];
    if (typeof value !== "string" || value.trim() === "")
      return { refused: `${key} is missing or not a non-empty string` };
    if (value.length > MAX_ID || !/^[\w.:-]+$/.test(value))
      return { refused: `${key} is not an id (letters, digits, . _ : -; at most ${MAX_ID})` };
  }
  if (typeof job.prompt !== "string" || job.prompt.trim() === "")
    return { refused: "prompt is missing or not a non-empty string" };
  if (typeof job.submittedAt !== "number" || !Number.isFinite(job.submittedAt))
    return { refused: "submittedAt is missing or not a number" };
  if (
    job.waits !== undefined &&
    (typeof job.waits !== "number" || !Number.isInteger(job.waits) || job.waits < 0)
  )
    return { refused: "waits is not a whole number >= 0" };
  return {
    requestId: job.requestId as string,
    sessionId: job.sessionId as string,
    prompt: job.prompt,
    submittedAt: job.submittedAt,
    ...(job.waits === undefined ? {} : { waits: job.waits as number }),
    // Observability only: a malformed trace context is dropped, never forwarded, and never refuses the job.
    ...(isTraceparent(job.traceparent) ? { traceparent: job.traceparent } : {}),
  };
}

export interface QueueSettings {
  /** Seconds a job may stay active before pg-boss takes it for lost and retries it (default 900). */
  expireInSeconds?: number;
  /** Retries of a lost or failed job (default 5). */
  retryLimit?: number;
  /** How often this process looks for lost jobs, in seconds (default 60; at least 1). */
  maintenanceIntervalSeconds?: number;
  /** Seconds a held job may go without its worker's heartbeat before it is retried (at least 10). */
  heartbeatSeconds?: number;
  /** A submitter only sends: no maintenance timers in its process. */
  role?: "worker" | "client";
  /** pg-boss's pool size (default 2 for a client, 4 for a worker). */
  connections?: number;
  /** Where pg-boss's own errors go (a database restart: it reconnects by itself). */
  onError?: (error: Error) => void;
}

/** Starts pg-boss on `url` (installing or migrating its schema) with the prompt queue created. */
export async function openQueue(url: string, settings: QueueSettings = {}): Promise<PgBoss> {
  const client = settings.role === "client";
  const checkSeconds = settings.maintenanceIntervalSeconds ?? 60;
  const { PgBoss } = await import("pg-boss");
  const boss = new PgBoss({
    connectionString: url,
    schema: QUEUE_SCHEMA,
    max: settings.connections ?? (client ? 2 : 4),
    // A submitter only sends: no supervision (expiry of lost jobs), no instance heartbeat.
    supervise: !client,
    registerInstance: !client,
    schedule: false,
    // Expiry of active jobs past `expireInSeconds` runs in the supervisor's pass over each
    // queue's monitor: both intervals are how often this process looks for lost jobs.
    superviseIntervalSeconds: checkSeconds,
    monitorIntervalSeconds: checkSeconds,
    // No listener of pg-boss's own: a worker's JobSlots listens for the queue's NOTIFY itself.
    useListenNotify: false,
  });
  // Without a listener an 'error' (a terminated backend, 57P01) would end the process;
  // pg-boss retries what failed once the server is back.
  boss.on("error", (error: Error) => settings.onError?.(error));
  await boss.start();
  const existing = await boss.getQueue(PROMPT_QUEUE);
  const options = {
    retryLimit: settings.retryLimit ?? 5,
    retryDelay: 1,
    expireInSeconds: settings.expireInSeconds ?? 900,
    ...(settings.heartbeatSeconds === undefined ? {} : { heartbeatSeconds: settings.heartbeatSeconds }),
    notify: true,
  };
  // Workers own the queue's settings (jobs take them when sent); a submitter never changes them.
  if (existing && !client) await boss.updateQueue(PROMPT_QUEUE, options);
  else if (!existing) {
    try {
      await boss.createQueue(PROMPT_QUEUE, { ...options, policy: "standard" });
    } catch (error) {
      // Another worker created it at the same moment.
      if (!(await boss.getQueue(PROMPT_QUEUE))) throw error;
    }
  }
  return boss;
}

/** Stops a queue opened by openQueue: a submitter's at once, a worker's after its jobs settle. */
export async function closeQueue(boss: PgBoss, options: { graceful?: boolean; timeoutMs?: number } = {}) {
  await boss.stop({ graceful: options.graceful ?? false, timeout: options.timeoutMs ?? 1_000 });
}

/**
 * Moves the prompt jobs pg-boss 10 left waiting (created, retry, or active: an active one's
 * worker is gone or about to finish it, and a request runs once however often it is sent)
 * from its schema into this queue, in one transaction with their removal there. Resolves
 * with how many moved; 0 when there is no pg-boss 10 schema. Other queues in it are left alone.
 */
export async function moveLegacyJobs(url: string, boss: PgBoss): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const table = await client.query<{ name: string | null }>("SELECT to_regclass($1) AS name", [
      `${LEGACY_SCHEMA}.version`,
    ]);
    if (!table.rows[0]?.name) return 0;
    const version = await client.query<{ version: number }>(`SELECT version FROM ${LEGACY_SCHEMA}.version`);
    if (Number(version.rows[0]?.version) !== LEGACY_VERSION) return 0;
    const db: Db = { executeSql: (text, values) => client.query(text, values as unknown[]) };
    await client.query("BEGIN");
    try {
      // Only what Rein wrote there: a prompt job names its session and carries a prompt.
      const moved = await client.query<{ data: PromptJob }>(
        `DELETE FROM ${LEGACY_SCHEMA}.job
          WHERE name = $1 AND state IN ('created', 'retry', 'active')
            AND jsonb_typeof(data->'sessionId') = 'string' AND jsonb_typeof(data->'prompt') = 'string'
          RETURNING data`,
        [PROMPT_QUEUE],
      );
      for (const { data } of moved.rows) {
        const requestId = typeof data.requestId === "string" ? data.requestId : randomUUID();
        await boss.send(PROMPT_QUEUE, { ...data, requestId }, { db });
      }
      await client.query("COMMIT");
      return moved.rows.length;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Queues a prompt for a session (or sends a job again, as it was); resolves with its request id. */
export async function submitPrompt(
  boss: PgBoss,
  request: {
    sessionId: string;
    prompt: string;
    requestId?: string;
    submittedAt?: number;
    waits?: number;
    traceparent?: string;
  },
  options: { startAfterSeconds?: number } = {},
): Promise<string> {
  const job: PromptJob = {
    requestId: request.requestId ?? randomUUID(),
    sessionId: request.sessionId,
    prompt: request.prompt,
    submittedAt: request.submittedAt ?? Date.now(),
    ...(request.waits === undefined ? {} : { waits: request.waits }),
    ...(isTraceparent(request.traceparent) ? { traceparent: request.traceparent } : {}),
  };
  const sendOptions = options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {};
  const id = await boss.send(PROMPT_QUEUE, job, sendOptions);
  if (id === null) throw new Error(`pg-boss refused the prompt job for session ${request.sessionId}`);
  return job.requestId;
}
