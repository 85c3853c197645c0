/**
 * Structural checks for session headers and entries, shared by every reader and by
 * `Session.append`, so a session never writes an entry it would refuse to load.
 *
 * Invariant: each check returns `undefined` for an acceptable value, or one sentence
 * saying what was expected; it never throws, whatever JSON it is given. Checks are
 * hand-written `typeof` tests (no schema compile) because opening a session runs them
 * once per line.
 *
 * Only `parentId` and a `leaf` entry's `targetId` must name an earlier entry: they
 * shape the tree. Other references (`label.targetId`, `compaction.firstKeptEntryId`,
 * `branch_summary.fromId`) may point outside the file, because a fork copies one
 * branch and leaves everything off that branch behind.
 */
import {
  SESSION_FORMAT_VERSION,
  type StoredEntry,
  THINKING_LEVELS as THINKING_LEVEL_LIST,
} from "./entries.js";
import {
  isFiniteNumber,
  isObject,
  messageProblem,
  requireString,
  show,
  userContentProblem,
} from "./message-checks.js";

/** Finds an entry (or journal record) appended before the one being checked. */
export type EntryLookup = (id: string) => StoredEntry | undefined;

const isNode = (entry: StoredEntry | undefined) =>
  entry !== undefined && entry.type !== "leaf" && entry.type !== "journal";

type Fields = Record<string, unknown>;

const THINKING_LEVELS: ReadonlySet<string> = new Set(THINKING_LEVEL_LIST);

const isStringArray = (value: unknown) =>
  Array.isArray(value) && value.every((item) => typeof item === "string");
const QUEUES = new Set(["steer", "followUp", "nextTurn"]);
const RUN_STATUSES = new Set(["completed", "aborted", "error", "blocked", "interrupted", "parked"]);

function requireQueue(entry: Fields): string | undefined {
  return typeof entry.queue === "string" && QUEUES.has(entry.queue)
    ? undefined
    : `expected "queue" to be steer, followUp or nextTurn, got ${show(entry.queue)}`;
}

/**
 * Journal records by event. An unknown event is accepted (a newer writer may add
 * some) and ignored by recovery; a known one must carry its fields.
 */
const JOURNAL_CHECKS: Record<string, (entry: Fields) => string | undefined> = {
  run_start: (entry) =>
    requireString(entry, "runId") ??
    (entry.stopAfterTools === undefined || entry.stopAfterTools === true
      ? undefined
      : `expected "stopAfterTools" to be true or absent, got ${show(entry.stopAfterTools)}`),
  run_end: (entry) =>
    requireString(entry, "runId") ??
    (typeof entry.status === "string" && RUN_STATUSES.has(entry.status)
      ? undefined
      : `expected "status" to be one of ${[...RUN_STATUSES].join(", ")}, got ${show(entry.status)}`),
  turn_start: (entry) => requireString(entry, "runId") ?? requireString(entry, "turnId"),
  turn_end: (entry) => requireString(entry, "runId") ?? requireString(entry, "turnId"),
  tool_start: (entry) =>
    requireString(entry, "runId") ?? requireString(entry, "toolCallId") ?? requireString(entry, "toolName"),
  tool_end: (entry) =>
    requireString(entry, "runId") ??
    requireString(entry, "toolCallId") ??
    requireString(entry, "toolName") ??
    (typeof entry.isError === "boolean"
      ? undefined
      : `expected a boolean "isError", got ${show(entry.isError)}`),
  // Queues hold requests for the model: recovery hands them back as user messages.
  queue_push: (entry) =>
    requireQueue(entry) ??
    requireString(entry, "queueId") ??
    messageProblem(entry.message) ??
    ((entry.message as Fields).role === "user"
      ? undefined
      : `expected the queued message to be a user message, got role ${show((entry.message as Fields).role)}`),
  queue_clear: (entry) =>
    requireQueue(entry) ??
    (isStringArray(entry.queueIds) ? undefined : `expected "queueIds" to be an array of strings`),
  queue_take: (entry) =>
    requireQueue(entry) ??
    (isStringArray(entry.queueIds) ? undefined : `expected "queueIds" to be an array of strings`),
  pending_write: (entry) => requireString(entry, "pendingId") ?? pendingInputProblem(entry.input),
  tool_park: (entry) =>
    requireString(entry, "runId") ??
    requireString(entry, "approvalId") ??
    requireString(entry, "toolCallId") ??
    requireString(entry, "toolName") ??
    requireString(entry, "argsHash") ??
    requireString(entry, "askedBy") ??
    requireString(entry, "reason") ??
    (isObject(entry.args) ? undefined : `expected "args" to be an object, got ${show(entry.args)}`),
  tool_approval: (entry) =>
    requireString(entry, "approvalId") ??
    requireString(entry, "toolCallId") ??
    requireString(entry, "by") ??
    requireString(entry, "argsHash") ??
    (typeof entry.reason === "string"
      ? undefined
      : `expected a string "reason", got ${show(entry.reason)}`) ??
    (entry.decision === "allow" || entry.decision === "deny"
      ? undefined
      : `expected "decision" to be "allow" or "deny", got ${show(entry.decision)}`),
};

/** What a harness queues while busy: config changes and the writes `appendEntry` accepts. */
const PENDING_TYPES = [
  "model_change",
  "thinking_level_change",
  "active_tools_change",
  "label",
  "custom",
  "custom_message",
  "session_info",
] as const;

/** A pending write's input must be an entry recovery can commit as it stands. */
function pendingInputProblem(input: unknown): string | undefined {
  if (!isObject(input) || !(PENDING_TYPES as readonly unknown[]).includes(input.type)) {
    return `expected "input" to be an entry of type ${PENDING_TYPES.join(", ")}, got ${show(isObject(input) ? input.type : input)}`;
  }
  const problem = TYPE_CHECKS[input.type as (typeof PENDING_TYPES)[number]](input, () => undefined);
  return problem === undefined ? undefined : `pending write input: ${problem}`;
}

/** Type-specific fields; the common ones (`id`, `parentId`, `timestamp`) are checked before. */
const TYPE_CHECKS: Record<StoredEntry["type"], (entry: Fields, lookup: EntryLookup) => string | undefined> = {
  message: (entry) =>
    messageProblem(entry.message) ??
    (entry.queueIds === undefined || isStringArray(entry.queueIds)
      ? undefined
      : `expected "queueIds" to be an array of strings`),
  model_change: (entry) => requireString(entry, "provider") ?? requireString(entry, "modelId"),
  thinking_level_change: (entry) =>
    typeof entry.thinkingLevel === "string" && THINKING_LEVELS.has(entry.thinkingLevel)
      ? undefined
      : `expected "thinkingLevel" to be one of ${[...THINKING_LEVELS].join(", ")}, got ${show(entry.thinkingLevel)}`,
  active_tools_change: (entry) =>
    Array.isArray(entry.activeTools) && entry.activeTools.every((name) => typeof name === "string")
      ? undefined
      : `expected "activeTools" to be an array of strings`,
  compaction: (entry) =>
    requireString(entry, "summary") ??
    requireString(entry, "firstKeptEntryId") ??
    (isFiniteNumber(entry.tokensBefore)
      ? undefined
      : `expected a number "tokensBefore", got ${show(entry.tokensBefore)}`),
  branch_summary: (entry) => requireString(entry, "fromId") ?? requireString(entry, "summary"),
  label: (entry) =>
    requireString(entry, "targetId") ??
    (entry.label === null || typeof entry.label === "string"
      ? undefined
      : `expected "label" to be a string or null, got ${show(entry.label)}`),
  leaf: (entry, lookup) => {
    if (entry.targetId === null) return undefined;
    if (typeof entry.targetId !== "string") return `expected "targetId" to be a string or null`;
    const target = lookup(entry.targetId);
    if (!isNode(target)) {
      return `expected "targetId" to name an earlier tree entry, but "${entry.targetId}" is not one`;
    }
    return undefined;
  },
  custom: (entry) => requireString(entry, "customType"),
  custom_message: (entry) =>
    requireString(entry, "customType") ??
    userContentProblem(entry.content, "the custom message's") ??
    (typeof entry.display === "boolean"
      ? undefined
      : `expected a boolean "display", got ${show(entry.display)}`),
  session_info: (entry) =>
    entry.name === undefined || typeof entry.name === "string" ? undefined : `expected "name" to be a string`,
  journal: (entry) => {
    if (typeof entry.event !== "string" || entry.event === "")
      return `expected a non-empty string "event", got ${show(entry.event)}`;
    return Object.hasOwn(JOURNAL_CHECKS, entry.event)
      ? (JOURNAL_CHECKS[entry.event] as (entry: Fields) => string | undefined)(entry)
      : undefined;
  },
};

const KNOWN_TYPES = Object.keys(TYPE_CHECKS).join(", ");

/** What is wrong with a session header, if anything. */
export function headerProblem(value: unknown): string | undefined {
  if (!isObject(value)) return "expected a session header object";
  if (value.type !== "session") return `expected a header with "type": "session", got ${show(value.type)}`;
  if (value.version !== SESSION_FORMAT_VERSION) {
    return `unsupported session format version ${show(value.version)} (expected ${SESSION_FORMAT_VERSION})`;
  }
  if (typeof value.id !== "string" || value.id === "")
    return `expected a non-empty string "id" in the header`;
  if (!isFiniteNumber(value.createdAt)) return `expected a number "createdAt" in the header`;
  if (value.cwd !== undefined && typeof value.cwd !== "string") return `expected "cwd" to be a string`;
  const fork = value.forkedFrom;
  if (
    fork !== undefined &&
    !(isObject(fork) && typeof fork.sessionId === "string" && typeof fork.entryId === "string")
  ) {
    return `expected "forkedFrom" to be { sessionId: string, entryId: string }`;
  }
  const parent = value.parent;
  if (
    parent !== undefined &&
    !(
      isObject(parent) &&
      typeof parent.sessionId === "string" &&
      typeof parent.toolCallId === "string" &&
      typeof parent.agentPath === "string"
    )
  ) {
    return `expected "parent" to be { sessionId: string, toolCallId: string, agentPath: string }`;
  }
  return undefined;
}

/**
 * What is wrong with `value` as the next entry of a session whose earlier entries
 * `lookup` knows, if anything.
 */
export function entryProblem(value: unknown, lookup: EntryLookup): string | undefined {
  if (!isObject(value)) return "expected an entry object";
  const { id, type, parentId } = value;
  if (typeof id !== "string" || id === "") return `expected a non-empty string "id", got ${show(id)}`;
  if (typeof type !== "string" || !Object.hasOwn(TYPE_CHECKS, type)) {
    return `expected "type" to be one of ${KNOWN_TYPES}, got ${show(type)}`;
  }
  if (!isFiniteNumber(value.timestamp)) return `expected a number "timestamp", got ${show(value.timestamp)}`;
  if (lookup(id) !== undefined) return `duplicate entry id "${id}"`;
  if (parentId !== null) {
    if (typeof parentId !== "string")
      return `expected "parentId" to be a string or null, got ${show(parentId)}`;
    const parent = lookup(parentId);
    if (!isNode(parent)) {
      return `expected "parentId" to name an earlier tree entry, but "${parentId}" is not one`;
    }
  }
  if (Object.hasOwn(value, "writeGroup")) return `"writeGroup" is reserved for the JSONL format`;
  if (value.pendingId !== undefined && typeof value.pendingId !== "string") {
    return `expected "pendingId" to be a string, got ${show(value.pendingId)}`;
  }
  return TYPE_CHECKS[type as StoredEntry["type"]](value, lookup);
}
