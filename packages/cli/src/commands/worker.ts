/**
 * `rein worker`: takes prompt jobs from the pg-boss queue and runs each on its
 * session (see worker/session-jobs.ts for the one-writer and run-once rules).
 *
 * Shutdown (SIGTERM, SIGINT): no new job is taken; the current run may finish within
 * `--grace` seconds, after which it is aborted cleanly (every tool call gets its
 * result, the session stays consistent) and its request is sent back to the queue,
 * where another worker continues it. A worker killed outright loses nothing either:
 * its job expires (`--expire`) and is retried, and recovery closes what it left open.
 * Sessions live in the configured store: with `session: { store: "postgres", url }`
 * workers on any host share them (and the queue defaults to that database); with
 * JSONL, every worker must see the same session directory.
 */
import type { AgentHarness } from "@rein/harness";
import pg from "pg";
import type { Job } from "pg-boss";
import { sessionBackend } from "../agent/session-backend.js";
import { type LoadedConfig, loadConfig } from "../config/load-config.js";
import { ExitCode, usageError } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import {
  moveLegacyJobs,
  openQueue,
  PROMPT_QUEUE,
  type PromptJob,
  submitPrompt,
} from "../worker/prompt-queue.js";
import { runPromptJob } from "../worker/session-jobs.js";

export interface WorkerOptions {
  db?: string;
  /** Seconds before an active job counts as lost and is retried. */
  expire?: string;
  /** Seconds the current run may take to finish on SIGTERM before it is aborted. */
  grace?: string;
  /** Seconds between polls for new jobs. */
  poll?: string;
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
  // Config errors stop the worker before it takes a job. Plugins load once per process
  // (module cache): restart workers (SIGTERM: graceful) to pick up edited plugins.
  const loaded = await loadConfig({ cwd: globals.cwd, configPath: globals.config });
  const url = queueUrl(options.db, loaded);
  const sessions = await sessionBackend(loaded);
  const expire = seconds(options.expire, "--expire", 900, 1);
  const grace = seconds(options.grace, "--grace", 30, 0);
  const poll = seconds(options.poll, "--poll", 1, 0.5);
  const log = (line: string) => process.stderr.write(`rein worker ${process.pid}: ${line}\n`);
  const boss = await openQueue(url, {
    expireInSeconds: expire,
    maintenanceIntervalSeconds: Math.max(1, Math.min(60, Math.floor(expire / 2))),
  });
  // Best effort: a schema this role may not read (another application's) must not stop the worker.
  const moved = await moveLegacyJobs(url, boss).catch((error: Error) => {
    log(
      `could not look for a pg-boss 10 queue (schema pgboss): ${error.message}; prompt jobs waiting there, if any, were not moved`,
    );
    return 0;
  });
  if (moved > 0)
    log(`moved ${moved} waiting prompt job(s) from the pg-boss 10 queue (schema pgboss) to this one`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let stopping = false;
  let harness: AgentHarness | undefined;
  let current: Promise<unknown> | undefined;

  const handle = async (job: Job<PromptJob>) => {
    const outcome = await runPromptJob(
      {
        cwd: globals.cwd,
        configPath: globals.config,
        client,
        stopping: () => stopping,
        running: (running) => {
          harness = running;
        },
      },
      job.data,
    );
    if (outcome.kind !== "done") {
      // Sent again before this job is acknowledged: a crash in between leaves two jobs for
      // one request, and the request's marks in the session make the second a no-op.
      await submitPrompt(boss, job.data, { startAfterSeconds: 1 });
      log(
        `request ${job.data.requestId} (session ${job.data.sessionId}) ${outcome.kind}: sent back to the queue`,
      );
      return { requeued: outcome.kind };
    }
    log(`request ${job.data.requestId} (session ${job.data.sessionId}) ${outcome.status}`);
    return { status: outcome.status };
  };

  const workId = await boss.work<PromptJob>(
    PROMPT_QUEUE,
    { batchSize: 1, pollingIntervalSeconds: poll, notifyPollingIntervalSeconds: poll },
    async (jobs) => {
      const [job] = jobs;
      if (!job) return;
      if (stopping) throw new Error("the worker is stopping"); // failed: retried elsewhere
      const running = handle(job);
      current = running;
      try {
        return await running;
      } finally {
        current = undefined;
        // A worker that just finished a job asks for the next at once, not after the polling interval.
        if (!stopping) boss.notifyWorker(workId);
      }
    },
  );
  log(
    `ready (queue ${PROMPT_QUEUE}, sessions ${sessions.kind} ${sessions.where}, expire ${expire}s, grace ${grace}s)`,
  );

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
  });
  stopping = true;
  log("stopping: no new jobs");
  // Without waiting: the current run gets --grace seconds below, not pg-boss's own wait.
  await boss.offWork(PROMPT_QUEUE, { wait: false });
  if (current) {
    const finished = await Promise.race([
      current.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), grace * 1000).unref()),
    ]);
    if (!finished) {
      log(`the current run did not finish within ${grace}s: aborting it; its request goes back to the queue`);
      harness?.abort("the worker is stopping");
      await current.catch(() => undefined);
    }
  }
  await boss.stop({ graceful: true, timeout: 5_000 });
  await client.end().catch(() => undefined);
  log("stopped");
  return ExitCode.ok;
}
