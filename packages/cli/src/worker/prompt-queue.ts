/**
 * The prompt queue: prompt jobs in PostgreSQL through pg-boss, and the event stream
 * back to whoever submitted them through LISTEN/NOTIFY, on the same database.
 *
 * Invariants: a job names its session and carries a `requestId` of its own (the
 * request's identity in the session, whatever pg-boss job carries it: a job may be
 * re-sent, never re-run, see session-jobs.ts); one NOTIFY channel per session, so a
 * follower hears only its session; a notification never exceeds PostgreSQL's payload
 * limit (a large event is sent as its type and `truncated: true`).
 *
 * pg-boss 12 lives in a schema of Rein's own (QUEUE_SCHEMA). Rein before pg-boss 12 used
 * pg-boss 10 in the shared default schema `pgboss`, which pg-boss 12 cannot migrate
 * (its oldest starting point is pg-boss 11's schema); a worker moves the prompt jobs
 * still waiting there into the new queue when it starts (moveLegacyJobs).
 */
import { createHash, randomUUID } from "node:crypto";
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
  submittedAt: number;
}

export interface QueueSettings {
  /** Seconds a job may stay active before pg-boss takes it for lost and retries it (default 900). */
  expireInSeconds?: number;
  /** Retries of a lost or failed job (default 5). */
  retryLimit?: number;
  /** How often this process looks for lost jobs, in seconds (default 60; at least 1). */
  maintenanceIntervalSeconds?: number;
  /** A submitter only sends: no maintenance timers in its process. */
  role?: "worker" | "client";
}

/** What a follower receives: an event of a request's run, or the request's end. */
export type QueueNotice =
  | { requestId: string; sessionId: string; kind: "event"; event: { type: string; [key: string]: unknown } }
  | { requestId: string; sessionId: string; kind: "end"; status: string; reason?: string };

/** PostgreSQL's NOTIFY payload limit is 8000 bytes; stay under it with room for the envelope. */
const MAX_PAYLOAD = 7_500;

/** Starts pg-boss on `url` (installing or migrating its schema) with the prompt queue created. */
export async function openQueue(url: string, settings: QueueSettings = {}): Promise<PgBoss> {
  const client = settings.role === "client";
  const checkSeconds = settings.maintenanceIntervalSeconds ?? 60;
  const { PgBoss } = await import("pg-boss");
  const boss = new PgBoss({
    connectionString: url,
    schema: QUEUE_SCHEMA,
    max: client ? 2 : 4,
    // A submitter only sends: no supervision (expiry of lost jobs), no instance heartbeat.
    supervise: !client,
    registerInstance: !client,
    schedule: false,
    // Expiry of active jobs past `expireInSeconds` runs in the supervisor's pass over each
    // queue's monitor: both intervals are how often this process looks for lost jobs.
    superviseIntervalSeconds: checkSeconds,
    monitorIntervalSeconds: checkSeconds,
    // A worker hears about a new job at once (NOTIFY), polling stays as the backstop.
    useListenNotify: !client,
  });
  boss.on("error", () => undefined); // maintenance hiccups are retried by pg-boss itself
  await boss.start();
  const existing = await boss.getQueue(PROMPT_QUEUE);
  const options = {
    retryLimit: settings.retryLimit ?? 5,
    retryDelay: 1,
    expireInSeconds: settings.expireInSeconds ?? 900,
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

/** Queues a prompt for a session; resolves with its request id. */
export async function submitPrompt(
  boss: PgBoss,
  request: { sessionId: string; prompt: string; requestId?: string },
  options: { startAfterSeconds?: number } = {},
): Promise<string> {
  const job: PromptJob = {
    requestId: request.requestId ?? randomUUID(),
    sessionId: request.sessionId,
    prompt: request.prompt,
    submittedAt: Date.now(),
  };
  const sendOptions = options.startAfterSeconds ? { startAfter: options.startAfterSeconds } : {};
  const id = await boss.send(PROMPT_QUEUE, job, sendOptions);
  if (id === null) throw new Error(`pg-boss refused the prompt job for session ${request.sessionId}`);
  return job.requestId;
}

/** The NOTIFY channel of a session: a hash, since channel names are identifiers of at most 63 bytes. */
export function sessionChannel(sessionId: string): string {
  return `rein_s_${createHash("sha256").update(sessionId).digest("hex").slice(0, 40)}`;
}

/** Publishes a notice on its session's channel (best effort: a follower may not be listening). */
export async function publish(client: pg.ClientBase, notice: QueueNotice): Promise<void> {
  let payload = JSON.stringify(notice);
  if (Buffer.byteLength(payload) > MAX_PAYLOAD && notice.kind === "event") {
    payload = JSON.stringify({ ...notice, event: { type: notice.event.type, truncated: true } });
  }
  await client.query("SELECT pg_notify($1, $2)", [sessionChannel(notice.sessionId), payload]);
}

/**
 * Listens to a session's notices until `stop()`; `onNotice` gets each one in order.
 * Resolves once LISTEN is in place, so a prompt submitted afterwards loses nothing.
 */
export async function followSession(
  url: string,
  sessionId: string,
  onNotice: (notice: QueueNotice) => void,
): Promise<{ stop(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const channel = sessionChannel(sessionId);
  client.on("notification", (message) => {
    if (message.channel !== channel || message.payload === undefined) return;
    try {
      onNotice(JSON.parse(message.payload) as QueueNotice);
    } catch {
      // not ours
    }
  });
  await client.query(`LISTEN ${channel}`);
  return {
    async stop() {
      await client.end().catch(() => undefined);
    },
  };
}
