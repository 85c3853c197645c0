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
 * Invariants: one writer at a time (the session lock; a second hook process
 * waits for it, as agents run hooks of parallel calls concurrently); every
 * entry is on disk when the hook answers (close syncs).
 */
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, rmSync, statSync } from "node:fs";
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
  for (;;) {
    try {
      const file = fileOf(store, id);
      const session = file ? Session.open(JsonlStorage.open(file)) : createAudit(store, id, input);
      if (session) return session;
    } catch (error) {
      if (!isHarnessError(error, "session_in_use") || Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline) throw new Error(`session ${id} is being created by another hook for too long`);
    await sleep(15 + Math.random() * 35);
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
  /** Closes the sessions a long-lived writer keeps open. */
  close(): void;
}

/**
 * `keepOpen` (`rein hook serve`): each agent session's Rein session stays open
 * (and locked) for the writer's life, synced after every record, instead of
 * being reopened and re-read per event.
 */
export function auditWriter(store: SessionStore, options: { keepOpen?: boolean } = {}): AuditWriter {
  const open = new Map<string, Session>();
  return {
    close() {
      for (const session of open.values()) session.close();
      open.clear();
    },
    async record(input, calls) {
      const cached = options.keepOpen ? open.get(input.sessionId) : undefined;
      const session = cached ?? (await openAudit(store, input));
      if (options.keepOpen) open.set(input.sessionId, session);
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
      } finally {
        // Appends are written at once (a crash of this process loses nothing); the
        // fsync runs in the background, coalesced (group commit), and again at close.
        if (options.keepOpen) session.sync({ wait: false });
        else session.close();
      }
    },
  };
}
