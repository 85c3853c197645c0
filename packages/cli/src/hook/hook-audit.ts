/**
 * The audit of agent hooks: every event an agent's hook reports is written to
 * a Rein session whose id is the agent's session id (or a stable hash of it),
 * in the config's session directory, so `rein sessions show`, `export`,
 * `replay` and `replay --coverage` read what Claude Code or Codex did.
 *
 * Shape (what `rein replay` reads, replay/recorded.ts): a prompt is a user
 * message; a decided tool call is an assistant message holding the Rein
 * call(s) followed by one tool result per call carrying the decision (`by`,
 * reason); what the agent's tool returned (PostToolUse) is a
 * `rein.agent-tool-result` custom entry. An ask left to the agent's own dialog
 * is recorded as asked (`unanswered`): the gate said ask.
 *
 * Invariants:
 * - One writer at a time (the session lock; a second hook process waits for
 *   it, as agents run hooks of parallel calls concurrently). A writer that finds
 *   the lock held leaves a `.<id>.wanted` marker beside the session; a writer
 *   that keeps sessions open (the hook daemon) closes a wanted session within
 *   `WANTED_CHECK_MS` and reopens it for its next entry, so the in-process
 *   fallback and a second daemon record into the same session, in turn.
 * - Every entry is written to the OS (write(2) returned) before `record`
 *   resolves: a crash of this process loses nothing. A writer per event
 *   (`rein hook <agent>`) also fsyncs before it answers (close syncs); a
 *   writer that keeps sessions open starts an fsync at once in the background
 *   (overlapping entries share one: group commit) and a power loss can lose the
 *   entries of that one fsync in flight.
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type DecisionRecord,
  isHarnessError,
  JsonlStorage,
  type RecordedToolResult,
  SESSION_FORMAT_VERSION,
  Session,
  type SessionStore,
} from "@rein/harness";
import { toAssistantMessage } from "@rein/sdk";
import { RESULT_ENTRY_TYPE } from "./audit-entries.js";
import type { DecidedCall } from "./hook-decision.js";
import type { HookInput } from "./hook-input.js";

const LOCK_WAIT_MS = 10_000;
const STALE_CLAIM_MS = 10_000;
/** How often a writer that keeps sessions open looks for another writer's `.wanted` marker. */
export const WANTED_CHECK_MS = 20;
/** A marker older than this was left by a writer that gave up or died: ignored. */
const STALE_WANTED_MS = LOCK_WAIT_MS + 5_000;

/** The marker a writer waiting for session `id`'s lock leaves beside it. */
const wantedMarker = (store: SessionStore, id: string) => join(store.dir, `.${id}.wanted`);

function isWanted(marker: string): boolean {
  const stats = statSync(marker, { throwIfNoEntry: false });
  return stats !== undefined && Date.now() - stats.mtimeMs < STALE_WANTED_MS;
}

/** The Rein session id for an agent's session id: itself when it fits a file name, else a UUID-shaped hash. */
export function reinSessionId(agentSessionId: string): string {
  if (/^[A-Za-z0-9-]{1,100}$/.test(agentSessionId)) return agentSessionId;
  const hex = createHash("sha256").update(agentSessionId).digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The file of session `id` in `store`, exactly that id (`pathOf` would also take a prefix). */
function fileOf(store: SessionStore, id: string): string | undefined {
  try {
    const file = store.pathOf(id);
    return file.endsWith(`_${id}.jsonl`) && existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates session `id` unless another hook process is doing so: the creation is
 * claimed with an exclusive lock file (two processes creating at once would
 * write two files with one id). A claim left by a crashed process is taken over
 * after `STALE_CLAIM_MS`.
 */
function createAudit(store: SessionStore, id: string, input: HookInput): Session | undefined {
  mkdirSync(store.dir, { recursive: true });
  const claim = join(store.dir, `.${id}.creating`);
  try {
    closeSync(openSync(claim, "wx"));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    try {
      if (Date.now() - statSync(claim).mtimeMs > STALE_CLAIM_MS) rmSync(claim, { force: true });
    } catch {
      // gone meanwhile: the next try sees the session or claims again
    }
    return undefined;
  }
  try {
    const existing = fileOf(store, id);
    if (existing) return Session.open(JsonlStorage.open(existing));
    const createdAt = Date.now();
    const session = Session.create(
      JsonlStorage.create(store.fileFor(id, createdAt), {
        type: "session",
        version: SESSION_FORMAT_VERSION,
        id,
        createdAt,
        cwd: input.cwd,
      }),
    );
    session.append({
      type: "session_info",
      name: `${input.agent} session ${input.sessionId}`,
      data: { agent: input.agent, agentSessionId: input.sessionId },
    });
    return session;
  } finally {
    rmSync(claim, { force: true });
  }
}

/** Opens (or creates) the audit session of `input`'s agent session, waiting out another hook's lock. */
async function openAudit(store: SessionStore, input: HookInput): Promise<Session> {
  const id = reinSessionId(input.sessionId);
  const deadline = Date.now() + LOCK_WAIT_MS;
  const marker = wantedMarker(store, id);
  let waited = false;
  try {
    for (;;) {
      try {
        const file = fileOf(store, id);
        const session = file ? Session.open(JsonlStorage.open(file)) : createAudit(store, id, input);
        if (session) return session;
      } catch (error) {
        if (!isHarnessError(error, "session_in_use") || Date.now() > deadline) throw error;
        // Held (by a daemon keeping it open, or another hook): ask for it; rewritten each try, as
        // another waiter that got the lock first removes it.
        waited = true;
        try {
          writeFileSync(marker, "");
        } catch {
          // Best effort: without it the holder still gives the session back when idle.
        }
      }
      if (Date.now() > deadline)
        throw new Error(`session ${id} is being created by another hook for too long`);
      await sleep(15 + Math.random() * 35);
    }
  } finally {
    if (waited) rmSync(marker, { force: true });
  }
}

/** Sessions known to hold a prompt (a long-lived writer asks each session once). */
const prompted = new WeakSet<Session>();

function hasPrompt(session: Session): boolean {
  if (prompted.has(session)) return true;
  const found = session.entries().some((entry) => entry.type === "message" && entry.message.role === "user");
  if (found) prompted.add(session);
  return found;
}

function recordOf(call: DecidedCall): DecisionRecord {
  if (call.decision === "ask")
    return { decision: "deny", by: call.by, reason: call.reason, unanswered: true };
  return { decision: call.decision, by: call.by, reason: call.reason };
}

function resultText(call: DecidedCall, agent: string): string {
  if (call.decision === "deny") return `denied by ${call.by}: ${call.reason}`;
  if (call.decision === "ask") return `asked (${call.by}: ${call.reason}); the answer is ${agent}'s`;
  return `allowed by ${call.by}; run by ${agent}`;
}

export interface AuditWriter {
  record(input: HookInput, calls: readonly DecidedCall[]): Promise<void>;
  /** The Rein session this writer keeps open for an agent session, if any (what it wrote, and what is on disk). */
  openSession(agentSessionId: string): Session | undefined;
  /** Closes the sessions a long-lived writer keeps open. */
  close(): void;
}

export interface AuditWriterOptions {
  /**
   * Each agent session's Rein session stays open (and locked) between records,
   * fsynced in the background after each (group commit), instead of being
   * reopened, re-read and fsynced per event.
   */
  keepOpen?: boolean;
  /**
   * With `keepOpen`: a session is closed (its lock given back) this long after
   * its last record, and at once (within `WANTED_CHECK_MS`) when another writer
   * leaves its `.wanted` marker. Without it a session stays open for the
   * writer's life (`rein hook serve`).
   */
  idleCloseMs?: number;
}

/** One session a writer keeps open, and when it last recorded. */
interface Held {
  session: Session;
  marker: string;
  lastUsed: number;
}

export function auditWriter(store: SessionStore, options: AuditWriterOptions = {}): AuditWriter {
  const open = new Map<string, Held>();
  let timer: NodeJS.Timeout | undefined;
  const release = (agentSessionId: string, held: Held) => {
    open.delete(agentSessionId);
    held.session.close(); // fsyncs what the background sync has not, then gives the lock back
    if (open.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  const syncInBackground = (agentSessionId: string, held: Held) => {
    try {
      held.session.sync({ wait: false });
    } catch (error) {
      release(agentSessionId, held); // a deleted file or a failed fsync: the next entry reopens
      throw error;
    }
  };
  const idleCloseMs = options.idleCloseMs;
  const watchHeld = () => {
    if (idleCloseMs === undefined || timer !== undefined) return;
    timer = setInterval(
      () => {
        const now = Date.now();
        for (const [agentSessionId, held] of open) {
          if (now - held.lastUsed >= idleCloseMs || isWanted(held.marker)) release(agentSessionId, held);
        }
      },
      Math.min(WANTED_CHECK_MS, idleCloseMs),
    );
    timer.unref();
  };
  return {
    openSession: (agentSessionId) => open.get(agentSessionId)?.session,
    close() {
      for (const [agentSessionId, held] of open) release(agentSessionId, held);
    },
    async record(input, calls) {
      const cached = options.keepOpen ? open.get(input.sessionId) : undefined;
      const session = cached?.session ?? (await openAudit(store, input));
      if (options.keepOpen) {
        const marker = wantedMarker(store, reinSessionId(input.sessionId));
        open.set(input.sessionId, { session, marker, lastUsed: Date.now() });
        watchHeld();
      }
      let failed = true;
      try {
        const now = Date.now();
        if (input.event === "UserPromptSubmit" && input.prompt !== undefined) {
          session.appendMessage({ role: "user", content: input.prompt, timestamp: now });
        }
        if (calls.length > 0) {
          // A replayed run starts from a prompt: an agent session joined mid-way gets a stand-in one.
          if (!hasPrompt(session))
            session.appendMessage({
              role: "user",
              content: `(${input.agent} session ${input.sessionId})`,
              timestamp: now,
            });
          const reply = toAssistantMessage({
            toolCalls: calls.map((call) => ({ id: call.id, name: call.call.name, args: call.call.args })),
          });
          session.appendMessage({ ...reply, provider: input.agent, model: input.agent, timestamp: now });
          for (const call of calls) {
            const result: RecordedToolResult = {
              role: "toolResult",
              toolCallId: call.id,
              toolName: call.call.name,
              content: [{ type: "text", text: resultText(call, input.agent) }],
              isError: call.decision !== "allow",
              timestamp: now,
              decision: recordOf(call),
            };
            session.appendMessage(result);
          }
        }
        if (input.event === "Stop" && hasPrompt(session)) {
          // The turn's closing answer: a replayed run ends where the agent's did.
          const text =
            typeof input.raw.last_assistant_message === "string" ? input.raw.last_assistant_message : "";
          const answer = toAssistantMessage(text === "" ? `(${input.agent} turn ended)` : text);
          session.appendMessage({ ...answer, provider: input.agent, model: input.agent, timestamp: now });
        }
        if (input.event === "PostToolUse") {
          session.append({
            type: "custom",
            customType: RESULT_ENTRY_TYPE,
            data: {
              agent: input.agent,
              toolCallId: input.toolUseId ?? null,
              tool: input.toolName,
              response: input.toolResponse ?? null,
            },
          });
        }
        failed = false;
      } finally {
        // Appends are written at once (a crash of this process loses nothing); the
        // fsync runs in the background, coalesced (group commit), and again at close.
        const held = open.get(input.sessionId);
        if (!options.keepOpen || held === undefined) session.close();
        else if (failed)
          release(input.sessionId, held); // reopened (and re-read) for the next entry
        else syncInBackground(input.sessionId, held);
      }
    },
  };
}
