/**
 * One prompt job as a worker runs it: at most one run per session across all
 * workers, and each request run once however often its job is delivered.
 *
 * Invariants:
 * - One writer per session: the worker holds a PostgreSQL advisory lock keyed by the
 *   session id on its own connection for the whole run (the server releases it when a
 *   worker dies, so no stale-lock guessing across hosts), and the session store's own
 *   lock behind it (the JSONL lock file, or the store's advisory lock in PostgreSQL). A job whose session is busy is sent again later, never run beside it.
 * - A request is recorded in its session: a `rein.request` custom entry `started` before
 *   the run and `finished` (with the run's status) after it, synced before the job is
 *   acknowledged. A job whose request is `finished` is acknowledged without running; one
 *   `started` but never finished (its worker died or stopped) continues the session as
 *   recovery left it (the interrupted turn closed, tool calls that may have run answered
 *   as such, never run again), so no tool call runs twice.
 */
import { type AgentHarness, isHarnessError, type RunOutcome, type Session } from "@rein/harness";
import type pg from "pg";
import { type Agent, buildAgent } from "../agent/build-agent.js";
import { type PromptJob, publish, type QueueNotice } from "./prompt-queue.js";

export const REQUEST_ENTRY = "rein.request";

/** What the model reads when a request is taken up again after its worker stopped. */
export const CONTINUE_PROMPT =
  "[rein worker] The run for this request was interrupted (its worker stopped) and is resumed here. Tool calls marked interrupted may or may not have run: check before repeating one. Continue the task.";

export type JobOutcome =
  | { kind: "done"; status: RunOutcome["status"] | "finished-before"; reason?: string }
  /** Another run holds the session: send the job again later. */
  | { kind: "busy" }
  /** The worker is stopping: the run was ended cleanly and the request goes on elsewhere. */
  | { kind: "stopped" };

export interface JobContext {
  cwd: string;
  configPath: string | undefined;
  /** This worker's own connection: the session advisory lock and NOTIFY. */
  client: pg.Client;
  stopping(): boolean;
  /** The running harness (to abort it on shutdown), or `undefined` when none runs. */
  running(harness: AgentHarness | undefined): void;
}

interface RequestMark {
  requestId: string;
  state: "started" | "finished";
  status?: string;
}

const lockKey = (sessionId: string) => `rein:session:${sessionId}`;

export async function runPromptJob(context: JobContext, job: PromptJob): Promise<JobOutcome> {
  const { client } = context;
  const locked = await client.query<{ ok: boolean }>(
    "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok",
    [lockKey(job.sessionId)],
  );
  if (locked.rows[0]?.ok !== true) return { kind: "busy" };
  try {
    return await runLocked(context, job);
  } finally {
    await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [lockKey(job.sessionId)]);
  }
}

async function runLocked(context: JobContext, job: PromptJob): Promise<JobOutcome> {
  let agent: Agent;
  try {
    agent = await buildAgent({ cwd: context.cwd, configPath: context.configPath, sessionId: job.sessionId });
  } catch (error) {
    // A session still locked by a run outside the worker pool: later.
    if (isHarnessError((error as { cause?: unknown }).cause, "session_in_use")) return { kind: "busy" };
    throw error;
  }
  const { harness, session } = agent;
  let events = Promise.resolve();
  const send = (notice: QueueNotice) => {
    events = events.then(() => publish(context.client, notice)).catch(() => undefined);
  };
  const base = { requestId: job.requestId, sessionId: job.sessionId };
  const unsubscribe = harness.subscribe((event) => {
    // Streaming deltas without the repeated partial message: followers rebuild it.
    const shown = event.type === "message_update" ? { type: event.type, delta: event.delta } : event;
    send({ ...base, kind: "event", event: shown as { type: string; [key: string]: unknown } });
  });
  try {
    const marks = requestMarks(session, job.requestId);
    const finished = marks.find((mark) => mark.state === "finished");
    if (finished) return { kind: "done", status: "finished-before" };
    let input = job.prompt;
    if (marks.length === 0) {
      harness.appendEntry({
        type: "custom",
        customType: REQUEST_ENTRY,
        data: { requestId: job.requestId, state: "started" },
      });
    } else if (promptRecordedAfterStart(session, job.requestId)) {
      input = CONTINUE_PROMPT;
    }
    context.running(harness);
    let outcome: RunOutcome | undefined;
    let failure: string | undefined;
    let parked = false;
    try {
      outcome = await harness.prompt(input);
    } catch (error) {
      failure = (error as Error).message;
      // The session waits on a person's approval from an earlier run: this request waits too.
      parked = isHarnessError(error, "parked");
    } finally {
      context.running(undefined);
    }
    if (outcome?.status === "aborted" && context.stopping()) return { kind: "stopped" };
    const status = outcome?.status ?? (parked ? "parked" : "error");
    const reason = failure ?? outcome?.reason;
    harness.appendEntry({
      type: "custom",
      customType: REQUEST_ENTRY,
      data: { requestId: job.requestId, state: "finished", status, ...(reason ? { reason } : {}) },
    });
    session.sync({ wait: true });
    // On an asynchronous store (PostgreSQL) the mark counts once stored: only then is the job acknowledged.
    await session.whenStored();
    send({ ...base, kind: "end", status, ...(reason ? { reason } : {}) });
    return reason === undefined ? { kind: "done", status } : { kind: "done", status, reason };
  } finally {
    unsubscribe();
    await events;
    await agent.dispose();
  }
}

/** The `rein.request` marks of one request in a session, in append order. */
export function requestMarks(session: Session, requestId: string): RequestMark[] {
  const marks: RequestMark[] = [];
  for (const entry of session.entries()) {
    if (entry.type !== "custom" || entry.customType !== REQUEST_ENTRY) continue;
    const data = entry.data as Partial<RequestMark> | undefined;
    if (data?.requestId === requestId && (data.state === "started" || data.state === "finished")) {
      marks.push(data as RequestMark);
    }
  }
  return marks;
}

/** Whether a user message was recorded after the request's `started` mark (else the prompt never got in). */
function promptRecordedAfterStart(session: Session, requestId: string): boolean {
  const entries = session.entries();
  const start = entries.findIndex(
    (entry) =>
      entry.type === "custom" &&
      entry.customType === REQUEST_ENTRY &&
      (entry.data as Partial<RequestMark> | undefined)?.requestId === requestId,
  );
  return entries.slice(start + 1).some((entry) => entry.type === "message" && entry.message.role === "user");
}
