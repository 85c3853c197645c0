/**
 * The prompt queue: prompt jobs in PostgreSQL through pg-boss, and the event stream
 * back to whoever submitted them through LISTEN/NOTIFY, on the same database.
 *
 * Invariants: a job names its session and carries a `requestId` of its own (the
 * request's identity in the session, whatever pg-boss job carries it: a job may be
 * re-sent, never re-run, see session-jobs.ts); one NOTIFY channel per session, so a
 * follower hears only its session; a notification never exceeds PostgreSQL's payload
 * limit (a large event is sent as its type and `truncated: true`).
 */
import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import PgBoss from "pg-boss";

export const PROMPT_QUEUE = "rein-prompts";

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
  const boss = new PgBoss({
    connectionString: url,
    max: client ? 2 : 4,
    supervise: !client,
    schedule: false,
    maintenanceIntervalSeconds: settings.maintenanceIntervalSeconds ?? 60,
    monitorStateIntervalSeconds: 3_600,
  });
  boss.on("error", () => undefined); // maintenance hiccups are retried by pg-boss itself
  await boss.start();
  const existing = await boss.getQueue(PROMPT_QUEUE);
  const options = {
    name: PROMPT_QUEUE,
    policy: "standard" as const,
    retryLimit: settings.retryLimit ?? 5,
    retryDelay: 1,
    expireInSeconds: settings.expireInSeconds ?? 900,
  };
  // Workers own the queue's settings (jobs take them when sent); a submitter never changes them.
  if (existing && !client) await boss.updateQueue(PROMPT_QUEUE, options);
  else if (!existing) {
    try {
      await boss.createQueue(PROMPT_QUEUE, options);
    } catch (error) {
      // Another worker created it at the same moment.
      if (!(await boss.getQueue(PROMPT_QUEUE))) throw error;
    }
  }
  return boss;
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
