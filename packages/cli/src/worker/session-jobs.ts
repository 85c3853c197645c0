/**
 * One prompt job as a worker runs it: at most one run per session across all
 * workers, each request run once however often its job is delivered, and the
 * requests of a session run in the order they were submitted.
 *
 * Invariants:
 * - One writer per session: the job runs only with the session open for writing in the
 *   configured store, which holds its lock for the whole run (PostgreSQL: an advisory
 *   lock on the connection the session writes through, a lease the server drops with
 *   its holder or after `leaseMs` of silence; JSONL: the session's lock file). A job
 *   whose session is busy is sent again later, never run beside it.
 * - A request is recorded in its session: a `rein.request` custom entry `started` (with
 *   its prompt) before the run and `finished` (with the run's status) after it, stored
 *   before the job is acknowledged. A job whose request is `finished` is acknowledged
 *   without running; one `started` but never finished (its worker died, froze or
 *   stopped) continues the session as recovery left it (the interrupted turn closed,
 *   tool calls that may have run answered as such, never run again).
 * - Order: holding the session, a worker first continues its interrupted requests, then
 *   runs the session's requests queued before this job's (by `submittedAt`), then
 *   this one. Their own jobs, when they come, find them finished.
 * - A session parked on a pending approval runs nothing: the request waits (sent back
 *   later). Once the approvals are answered, the next job resumes the parked run first.
 */
import {
  type AgentHarness,
  isHarnessError,
  type RunOutcome,
  type Session,
  type SessionEntry,
} from "@rein/harness";
import { traceContext } from "@rein/sdk";
import type pg from "pg";
import { type Agent, buildAgent, type SharedStack } from "../agent/build-agent.js";
import { queuedBefore } from "./earlier-requests.js";
import { noticeStream, type QueueNotice } from "./notices.js";
import type { PromptJob } from "./prompt-queue.js";

export const REQUEST_ENTRY = "rein.request";

/** What the model reads when a request is taken up again after its worker stopped. */
export const CONTINUE_PROMPT =
  "[rein worker] The run for this request was interrupted (its worker stopped) and is resumed here. Tool calls marked interrupted may or may not have run: check before repeating one. Continue the task.";

export type JobOutcome =
  | { kind: "done"; status: RunOutcome["status"] | "finished-before"; reason?: string }
  /** Another run holds the session: send the job again later. */
  | { kind: "busy" }
  /** The session waits on a person's approval: the request waits too (sent again later). */
  | { kind: "waiting" }
  /** The run was aborted (the worker is stopping, or lost its claim): the request goes on elsewhere. */
  | { kind: "stopped" }
  /** The job cannot run: no such session. Nothing was written. */
  | { kind: "refused"; reason: string };

export interface JobContext {
  cwd: string;
  configPath: string | undefined;
  /** The queue's database: NOTIFY, and the session's other queued requests. */
  queue: pg.Pool;
  /** The session lock's lease in ms (PostgreSQL store). */
  leaseMs?: number;
  /** Aborted when this run must stop (the worker stops, or lost the job's claim). */
  signal: AbortSignal;
  /**
   * What the process's runs share (config, model, plugins, store: worker-stack.ts),
   * re-checked before each job; without it each job loads its own.
   */
  stack?: { get(): Promise<SharedStack> };
}

interface RequestMark {
  requestId: string;
  state: "started" | "finished";
  status?: string;
  prompt?: string;
}

/** A request to run here: its id, its prompt (if known), and whether it is this job's. */
interface Request {
  requestId: string;
  prompt: string | undefined;
  own: boolean;
}

export async function runPromptJob(context: JobContext, job: PromptJob): Promise<JobOutcome> {
  let agent: Agent;
  try {
    const shared = await context.stack?.get();
    agent = await buildAgent({
      ...(shared ? { shared } : {}),
      cwd: context.cwd,
      configPath: context.configPath,
      sessionId: job.sessionId,
      // Many runs share this process's event loop: a JSONL session's fsyncs must not stall the others.
      syncOffThread: true,
      ...(context.leaseMs === undefined ? {} : { leaseMs: context.leaseMs }),
    });
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    // A session locked by another run (a worker, or a run outside the pool): later.
    if (isHarnessError(cause, "session_in_use")) return { kind: "busy" };
    // No such session (or an ambiguous prefix): never create one for a job.
    if (isHarnessError(cause, "invalid_argument"))
      return { kind: "refused", reason: (cause as Error).message };
    throw error;
  }
  try {
    if (agent.session.id !== job.sessionId)
      return {
        kind: "refused",
        reason: `no session "${job.sessionId}" (it is a prefix of ${agent.session.id})`,
      };
    // The submitter's trace continues here (a tracing plugin hangs the run's spans under it).
    if (job.traceparent !== undefined) traceContext(agent.harness).setParent(job.traceparent);
    return await runLocked(context, agent, job);
  } finally {
    await agent.dispose();
  }
}

async function runLocked(context: JobContext, agent: Agent, job: PromptJob): Promise<JobOutcome> {
  const { harness, session } = agent;
  const events = noticeStream(context.queue);
  const send = (notice: QueueNotice) => events.send(notice);
  let current = job.requestId;
  const unsubscribe = harness.subscribe((event) => {
    // Streaming deltas without the repeated partial message: followers rebuild it.
    const shown = event.type === "message_update" ? { type: event.type, delta: event.delta } : event;
    send({
      requestId: current,
      sessionId: job.sessionId,
      kind: "event",
      event: shown as { type: string; [key: string]: unknown },
    });
  });
  const abort = () => harness.abort("the worker is stopping");
  context.signal.addEventListener("abort", abort);
  try {
    if (requestMarks(session, job.requestId).some((mark) => mark.state === "finished"))
      return { kind: "done", status: "finished-before" };
    const parked = await resumeParked(context, harness, session, (id) => {
      current = id;
    });
    if (parked === "pending") return { kind: "waiting" };
    if (parked === "stopped") return { kind: "stopped" };
    for (const request of await agenda(context.queue, session, job)) {
      current = request.requestId;
      const outcome = await runRequest(context, harness, session, request, send);
      if (request.own || outcome.kind !== "done") return outcome;
      // A request before this one parked: this one waits behind it.
      if (outcome.status === "parked") return { kind: "waiting" };
    }
    return { kind: "done", status: "finished-before" }; // unreachable: the agenda ends with the job's own request
  } finally {
    context.signal.removeEventListener("abort", abort);
    unsubscribe();
    await events.flushed();
  }
}

/**
 * A parked run goes first: still pending, everything waits; answered, it is resumed here
 * (its events go to the request that parked). "none" when the session is not parked.
 */
async function resumeParked(
  context: JobContext,
  harness: AgentHarness,
  session: Session,
  follow: (requestId: string) => void,
): Promise<"none" | "pending" | "stopped" | "resumed"> {
  const parkedBy = [...marksOf(session)]
    .reverse()
    .find((mark) => mark.state === "finished" && mark.status === "parked")?.requestId;
  if (parkedBy) follow(parkedBy);
  let outcome: RunOutcome;
  try {
    outcome = await harness.resume();
  } catch (error) {
    if (isHarnessError(error, "parked")) return "pending";
    if (isHarnessError(error, "invalid_argument")) return "none"; // nothing parked
    throw error;
  }
  if (outcome.status === "aborted" && context.signal.aborted) return "stopped";
  if (parkedBy) finish(harness, parkedBy, outcome.status, outcome.reason);
  return outcome.status === "parked" ? "pending" : "resumed";
}

/** The requests to run now, in order: interrupted ones, those queued before the job, the job. */
async function agenda(queue: pg.Pool, session: Session, job: PromptJob): Promise<Request[]> {
  const state = new Map<string, RequestMark>();
  for (const mark of marksOf(session)) {
    const known = state.get(mark.requestId);
    if (known?.state !== "finished")
      state.set(mark.requestId, { ...mark, prompt: mark.prompt ?? known?.prompt });
  }
  const list: Request[] = [];
  const seen = new Set<string>();
  const add = (requestId: string, prompt: string | undefined) => {
    if (seen.has(requestId) || state.get(requestId)?.state === "finished") return;
    seen.add(requestId);
    list.push({ requestId, prompt, own: requestId === job.requestId });
  };
  for (const [requestId, mark] of state) if (mark.state === "started") add(requestId, mark.prompt);
  for (const earlier of await queuedBefore(queue, job)) add(earlier.requestId, earlier.prompt);
  add(job.requestId, job.prompt);
  const own = list.findIndex((request) => request.own);
  if (own >= 0) (list[own] as Request).prompt = job.prompt;
  return list.slice(0, own + 1);
}

async function runRequest(
  context: JobContext,
  harness: AgentHarness,
  session: Session,
  request: Request,
  send: (notice: QueueNotice) => void,
): Promise<JobOutcome> {
  const marks = requestMarks(session, request.requestId);
  let input = request.prompt;
  if (marks.length === 0) {
    if (input === undefined) return { kind: "done", status: "finished-before" };
    harness.appendEntry({
      type: "custom",
      customType: REQUEST_ENTRY,
      data: { requestId: request.requestId, state: "started", prompt: input },
    });
  } else {
    // Its run ended before its worker died, the `finished` mark not yet stored: the
    // request is done; running it again would repeat the answer.
    const ended = runEndedAfterStart(session, request.requestId);
    if (ended !== undefined) {
      finish(harness, request.requestId, ended, undefined);
      session.sync({ wait: true });
      await session.whenStored();
      send({ requestId: request.requestId, sessionId: session.id, kind: "end", status: ended });
      return { kind: "done", status: ended };
    }
    if (promptRecordedAfterStart(session, request.requestId)) input = CONTINUE_PROMPT;
  }
  // Started, its prompt never recorded nor known here: its own job runs it.
  if (input === undefined) return { kind: "done", status: "finished-before" };
  let outcome: RunOutcome | undefined;
  let failure: string | undefined;
  let parked = false;
  try {
    outcome = await harness.prompt(input);
  } catch (error) {
    failure = (error as Error).message;
    parked = isHarnessError(error, "parked");
  }
  if (outcome?.status === "aborted" && context.signal.aborted) return { kind: "stopped" };
  const status = outcome?.status ?? (parked ? "parked" : "error");
  const reason = failure ?? outcome?.reason;
  finish(harness, request.requestId, status, reason);
  session.sync({ wait: true });
  // On an asynchronous store (PostgreSQL) the mark counts once stored: only then is the job acknowledged.
  await session.whenStored();
  send({
    requestId: request.requestId,
    sessionId: session.id,
    kind: "end",
    status,
    ...(reason ? { reason } : {}),
  });
  return reason === undefined ? { kind: "done", status } : { kind: "done", status, reason };
}

function finish(harness: AgentHarness, requestId: string, status: string, reason: string | undefined): void {
  harness.appendEntry({
    type: "custom",
    customType: REQUEST_ENTRY,
    data: { requestId, state: "finished", status, ...(reason ? { reason } : {}) },
  });
}

/** Every `rein.request` mark in a session, in append order. */
function marksOf(session: Session): RequestMark[] {
  const marks: RequestMark[] = [];
  for (const entry of session.entries()) {
    if (entry.type !== "custom" || entry.customType !== REQUEST_ENTRY) continue;
    const data = entry.data as Partial<RequestMark> | undefined;
    if (typeof data?.requestId === "string" && (data.state === "started" || data.state === "finished"))
      marks.push(data as RequestMark);
  }
  return marks;
}

/** The `rein.request` marks of one request in a session, in append order. */
export function requestMarks(session: Session, requestId: string): RequestMark[] {
  return marksOf(session).filter((mark) => mark.requestId === requestId);
}

/** Whether a user message was recorded after the request's `started` mark (else the prompt never got in). */
function promptRecordedAfterStart(session: Session, requestId: string): boolean {
  const entries = session.entries();
  const start = startMarkIndex(entries, requestId);
  return entries.slice(start + 1).some((entry) => entry.type === "message" && entry.message.role === "user");
}

/**
 * How the request's own run ended, when it ended `completed`, `error` or `blocked` after its
 * `started` mark and no run began since: its worker died between the run's end and
 * the `finished` mark. Undefined otherwise (never run, interrupted, aborted, parked).
 */
function runEndedAfterStart(
  session: Session,
  requestId: string,
): "completed" | "error" | "blocked" | undefined {
  const entries = session.entries();
  const start = startMarkIndex(entries, requestId);
  if (start < 0) return undefined;
  const after = new Set(entries.slice(start).map((entry) => entry.id));
  const last = session
    .journal()
    .findLast((record) => record.event === "run_start" || record.event === "run_end");
  if (last?.event !== "run_end" || last.parentId === null || !after.has(last.parentId)) return undefined;
  return last.status === "completed" || last.status === "error" || last.status === "blocked"
    ? last.status
    : undefined;
}

/** Where the request's first `rein.request` mark (its `started`) stands in `entries`; -1 when absent. */
function startMarkIndex(entries: readonly SessionEntry[], requestId: string): number {
  return entries.findIndex(
    (entry) =>
      entry.type === "custom" &&
      entry.customType === REQUEST_ENTRY &&
      (entry.data as Partial<RequestMark> | undefined)?.requestId === requestId,
  );
}
