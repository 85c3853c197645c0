/**
 * `rein worker`: takes prompt jobs from the pg-boss queue and runs each on its
 * session (see worker/session-jobs.ts for the one-writer, run-once and order rules),
 * up to `--concurrency` at once.
 *
 * Shutdown (SIGTERM, SIGINT): no new job is taken; the current runs may finish within
 * `--grace` seconds, after which they are aborted cleanly (every tool call gets its
 * result, the session stays consistent) and their requests are sent back to the queue,
 * where another worker continues them. A run that has not ended ABORT_SETTLE_MS after
 * its abort (a tool that ignores the signal) does not hold the exit: its request is
 * sent back and the process exits, leaving it to recovery as after a SIGKILL. So a
 * stop takes at most `--grace` + ABORT_SETTLE_MS + STOP_QUEUE_MS.
 * A worker killed or frozen loses nothing either: its jobs stop being heartbeated and
 * are retried after `--lease` seconds, its session locks are dropped by the server
 * after as long (see @rein/store-postgres), and recovery closes what it left open.
 * A database restart does not end the worker: pg-boss reconnects, runs in flight
 * finish (JSONL) or lose their session and are sent back (PostgreSQL).
 * Sessions live in the configured store: with `session: { store: "postgres", url }`
 * workers on any host share them (and the queue defaults to that database); with
 * JSONL, every worker must see the same session directory.
 */
import { maskConnectionStrings } from "@rein/harness";
import pg from "pg";
import { usingDatabase } from "../agent/database-errors.js";
import { sessionBackend } from "../agent/session-backend.js";
import { type LoadedConfig, loadConfig } from "../config/load-config.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { JobSlots } from "../worker/job-slots.js";
import { installNotices } from "../worker/notices.js";
import {
  moveLegacyJobs,
  openQueue,
  PROMPT_QUEUE,
  type PromptJob,
  parsePromptJob,
  submitPrompt,
} from "../worker/prompt-queue.js";
import { type JobOutcome, runPromptJob } from "../worker/session-jobs.js";
import { WorkerStack } from "../worker/worker-stack.js";

/**
 * Runs at once by default: the most at which one worker still reached about 90 % of
 * the ideal throughput against a model with a fixed 2 s latency (docs/benchmarks.md,
 * "Concurrent runs per worker"), at about 0.5 MiB per waiting run.
 */
const DEFAULT_CONCURRENCY = 8;

/** How long an aborted run may take to end before the worker exits without it. */
const ABORT_SETTLE_MS = 2_000;
/** How long stopping the queue may take (a database that is down must not hold the exit). */
const STOP_QUEUE_MS = 3_000;
/** The most connections each of the worker's two pools opens to the queue's database. */
const MAX_CONNECTIONS = 12;
/**
 * Runs whose PostgreSQL session locks (and writes) share one lock connection: a worker
 * holds `ceil(concurrency / LOCKS_PER_CONNECTION)` lock connections, at most
 * MAX_LOCK_CONNECTIONS, instead of one per run.
 */
const LOCKS_PER_CONNECTION = 64;
const MAX_LOCK_CONNECTIONS = 8;
/** The longest a waiting request is held back before it is tried again. */
const MAX_WAIT_SECONDS = 15;

export interface WorkerOptions {
  db?: string;
  /** Seconds before an active job counts as lost and is retried. */
  expire?: string;
  /** Seconds the current run may take to finish on SIGTERM before it is aborted. */
  grace?: string;
  /** Seconds between polls for new jobs. */
  poll?: string;
  /** Seconds a silent worker keeps its jobs and session locks. */
  lease?: string;
  /** Runs at once. */
  concurrency?: string;
}

/**
 * The queue's database: `--db`, else env REIN_QUEUE_URL, else the session store's own
 * database when sessions live in PostgreSQL (one database then carries both).
 */
export function queueUrl(db: string | undefined, loaded: LoadedConfig): string {
  const session = loaded.config.session;
  const url =
    db || process.env.REIN_QUEUE_URL || (session?.store === "postgres" ? (session.url as string) : undefined);
  if (!url) {
    throw usageError(
      "no queue database given",
      '--db postgres://..., env REIN_QUEUE_URL, or session: { store: "postgres", url } in rein.config.ts',
    );
  }
  return url;
}

function seconds(value: string | undefined, option: string, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min)
    throw usageError(`${option}: expected a number of seconds >= ${min}, got ${value}`);
  return n;
}

export async function workerCommand(options: WorkerOptions, globals: GlobalOptions): Promise<number> {
  // Config errors stop the worker before it takes a job. The config, model and plugins
  // are then built once for all runs and built again when a file they rest on changes
  // (worker/worker-stack.ts): an edited config or plugin applies from the next job.
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const url = queueUrl(options.db, loaded);
  const sessions = await sessionBackend(loaded);
  const expire = seconds(options.expire, "--expire", 900, 1);
  const grace = seconds(options.grace, "--grace", 30, 0);
  const poll = seconds(options.poll, "--poll", 1, 0.5);
  const lease = seconds(options.lease, "--lease", 30, 10);
  const concurrency = seconds(options.concurrency, "--concurrency", DEFAULT_CONCURRENCY, 1);
  if (!Number.isInteger(concurrency))
    throw usageError(`--concurrency: expected a whole number >= 1, got ${options.concurrency}`);
  const log = (line: string) =>
    process.stderr.write(maskConnectionStrings(`rein worker ${process.pid}: ${line}\n`));
  let lastQueueError = 0;
  const queueError = (error: Error) => {
    // A database restart shows as a burst of errors: say so once in a while, not per error.
    if (Date.now() - lastQueueError < 30_000) return;
    lastQueueError = Date.now();
    log(`queue database error (retrying): ${error.message}`);
  };
  const where = maskConnectionStrings(url);
  // Connections grow with the runs in flight (fetch, complete, NOTIFY), within reason.
  const connections = Math.min(MAX_CONNECTIONS, Math.max(4, 2 + Math.ceil(concurrency / 20)));
  const boss = await usingDatabase("queue", where, () =>
    openQueue(url, {
      connections,
      expireInSeconds: expire,
      heartbeatSeconds: lease,
      // Lost jobs (expired, or without heartbeat) are looked for at least twice per lease.
      maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(expire / 2), Math.floor(lease / 2))),
      onError: queueError,
    }),
  );
  // Best effort: a schema this role may not read (another application's) must not stop the worker.
  const moved = await moveLegacyJobs(url, boss).catch((error: Error) => {
    log(
      `could not look for a pg-boss 10 queue (schema pgboss): ${error.message}; prompt jobs waiting there, if any, were not moved`,
    );
    return 0;
  });
  if (moved > 0)
    log(`moved ${moved} waiting prompt job(s) from the pg-boss 10 queue (schema pgboss) to this one`);
  // NOTIFY and the session order queries: a pool, so a connection lost to a restart is replaced.
  const queue = new pg.Pool({
    connectionString: url,
    max: connections,
    application_name: `rein worker ${process.pid}`,
  });
  queue.on("error", () => undefined); // an idle client's server went away: the pool drops it
  await usingDatabase("queue", where, () => installNotices(queue));
  const stack = new WorkerStack({
    cwd: globals.cwd,
    configPath: globals.config,
    leaseMs: lease * 1000,
    lockConnections: Math.min(MAX_LOCK_CONNECTIONS, Math.ceil(concurrency / LOCKS_PER_CONNECTION)),
  });
  const inFlight = new Map<string, { job: PromptJob; done: Promise<unknown>; controller: AbortController }>();

  const sendBack = async (job: PromptJob, outcome: JobOutcome["kind"] | "lost") => {
    const waits = job.waits ?? 0;
    const later = outcome === "busy" || outcome === "waiting";
    // Sent again before this job is acknowledged: a crash in between leaves two jobs for
    // one request, and the request's marks in the session make the second a no-op.
    await submitPrompt(boss, later ? { ...job, waits: waits + 1 } : job, {
      startAfterSeconds: later ? Math.min(MAX_WAIT_SECONDS, 2 ** Math.min(waits, 4)) : 1,
    });
    log(`request ${job.requestId} (session ${job.sessionId}) ${outcome}: sent back to the queue`);
  };

  const handle = async (jobId: string, job: PromptJob, signal: AbortSignal) => {
    let outcome: JobOutcome;
    try {
      outcome = await runPromptJob(
        { cwd: globals.cwd, configPath: globals.config, queue, leaseMs: lease * 1000, signal, stack },
        job,
      );
    } catch (error) {
      // The session was lost under the run (its lock connection, a database restart):
      // whatever it left is recovered where the request runs next.
      log(`request ${job.requestId} (session ${job.sessionId}) failed: ${(error as Error).message}`);
      await sendBack(job, "lost");
      return { requeued: "lost" };
    }
    if (outcome.kind === "refused") {
      log(`refused job ${jobId} (request ${job.requestId}, session ${job.sessionId}): ${outcome.reason}`);
      return { refused: outcome.reason };
    }
    if (outcome.kind !== "done") {
      await sendBack(job, outcome.kind);
      return { requeued: outcome.kind };
    }
    log(`request ${job.requestId} (session ${job.sessionId}) ${outcome.status}`);
    return { status: outcome.status };
  };

  const slots = new JobSlots<PromptJob>(
    boss,
    { concurrency, pollSeconds: poll, heartbeatSeconds: lease, onError: queueError },
    async (job, claim) => {
      const parsed = parsePromptJob(job.data);
      if ("refused" in parsed) {
        // Acknowledged, not retried: no retry makes it runnable. Nothing reaches a session.
        log(`refused job ${job.id}: ${parsed.refused}`);
        return { refused: parsed.refused };
      }
      const controller = new AbortController();
      // Aborted when the job's claim is gone (retried elsewhere after a lost heartbeat).
      const claimLost = () => controller.abort();
      claim.addEventListener("abort", claimLost);
      const running = handle(job.id, parsed, controller.signal);
      inFlight.set(job.id, { job: parsed, done: running, controller });
      try {
        return await running;
      } finally {
        claim.removeEventListener("abort", claimLost);
        inFlight.delete(job.id);
      }
    },
  );
  await usingDatabase("queue", where, () => slots.start());
  log(
    `ready (queue ${PROMPT_QUEUE} in ${where}, sessions ${sessions.kind} ${sessions.where}, concurrency ${concurrency}, expire ${expire}s, lease ${lease}s, grace ${grace}s)`,
  );

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  log("stopping: no new jobs");
  // Without waiting for the runs: they get --grace seconds below.
  await within(slots.stop(), STOP_QUEUE_MS);
  const settled = () => Promise.all([...inFlight.values()].map((run) => run.done.catch(() => undefined)));
  if (inFlight.size > 0 && !(await within(settled(), grace * 1000))) {
    log(
      `${inFlight.size} run(s) did not finish within ${grace}s: aborting them; their requests go back to the queue`,
    );
    for (const run of inFlight.values()) run.controller.abort();
    if (!(await within(settled(), ABORT_SETTLE_MS))) {
      const stuck = [...inFlight.values()];
      log(
        `${stuck.length} run(s) did not end within ${ABORT_SETTLE_MS / 1000}s of their abort (a tool ignoring it): exiting without them; recovery closes what they left open`,
      );
      await within(
        Promise.all(stuck.map((run) => sendBack(run.job, "stopped").catch(() => undefined))),
        STOP_QUEUE_MS,
      );
      log("stopped");
      process.exit(ExitCode.ok);
    }
  }
  // Their jobs completed (or failed, to be retried) before the queue closes.
  await within(slots.settled(), STOP_QUEUE_MS);
  slots.close();
  await within(boss.stop({ graceful: true, timeout: STOP_QUEUE_MS }), STOP_QUEUE_MS + 500);
  await within(queue.end(), 1_000);
  await within(stack.close(), 1_000);
  log("stopped");
  return ExitCode.ok;
}

/** Whether `work` settled within `ms`. */
function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref()),
  ]);
}
