/**
 * Structural checks for the messages a session stores: role, content blocks (each
 * block's type and fields), tool-call and tool-result ids, stop reason and usage
 * numbers - everything a later prompt reads, so a session that opens can be prompted.
 *
 * Invariant: like ./validation.ts, each check returns `undefined` for an acceptable
 * value or one sentence saying what was expected, and never throws for any JSON. Fields
 * a provider adds beyond pi-ai's types are allowed; the ones Rein or pi-ai read must
 * have their type.
 */

type Fields = Record<string, unknown>;

export const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);
export const isFiniteNumber = (value: unknown): value is number =>
  typeof value === "number" && Number.isFinite(value);
export const show = (value: unknown): string => {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

export function requireString(value: Fields, field: string, where = ""): string | undefined {
  return typeof value[field] === "string"
    ? undefined
    : `expected ${where}a string "${field}", got ${show(value[field])}`;
}
function optional(value: Fields, field: string, type: "string" | "boolean", where: string) {
  return value[field] === undefined || typeof value[field] === type
    ? undefined
    : `expected ${where}"${field}" to be a ${type}, got ${show(value[field])}`;
}

type BlockType = "text" | "thinking" | "image" | "toolCall";
const BLOCK_CHECKS: Record<BlockType, (block: Fields, where: string) => string | undefined> = {
  text: (block, where) =>
    requireString(block, "text", where) ?? optional(block, "textSignature", "string", where),
  thinking: (block, where) =>
    requireString(block, "thinking", where) ??
    optional(block, "thinkingSignature", "string", where) ??
    optional(block, "redacted", "boolean", where),
  image: (block, where) => requireString(block, "data", where) ?? requireString(block, "mimeType", where),
  toolCall: (block, where) =>
    requireString(block, "id", where) ??
    requireString(block, "name", where) ??
    (isObject(block.arguments)
      ? undefined
      : `expected ${where}"arguments" to be an object, got ${show(block.arguments)}`) ??
    optional(block, "thoughtSignature", "string", where),
};

/** Checks an array of content blocks whose types are among `allowed`. */
export function blocksProblem(
  content: unknown,
  allowed: readonly BlockType[],
  owner: string,
): string | undefined {
  if (!Array.isArray(content)) return `expected ${owner} "content" to be an array, got ${show(content)}`;
  for (let index = 0; index < content.length; index++) {
    const block: unknown = content[index];
    // The common case, an acceptable block, builds no message text at all.
    if (
      isObject(block) &&
      typeof block.type === "string" &&
      (allowed as readonly string[]).includes(block.type) &&
      BLOCK_CHECKS[block.type as BlockType](block, "") === undefined
    ) {
      continue;
    }
    const where = `${owner} content block ${index}: `;
    if (!isObject(block)) return `expected ${where}an object, got ${show(block)}`;
    if (typeof block.type !== "string" || !(allowed as readonly string[]).includes(block.type)) {
      return `expected ${where}"type" to be ${allowed.join(", ")}, got ${show(block.type)}`;
    }
    return BLOCK_CHECKS[block.type as BlockType](block, where);
  }
  return undefined;
}

/** User content: a string, or text and image blocks. */
export function userContentProblem(content: unknown, owner: string): string | undefined {
  return typeof content === "string" ? undefined : blocksProblem(content, ["text", "image"], owner);
}

const STOP_REASONS = new Set(["stop", "length", "toolUse", "error", "aborted"]);
const USAGE_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const;
const COST_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "total"] as const;

function numbersProblem(value: unknown, fields: readonly string[], owner: string): string | undefined {
  if (!isObject(value)) return `expected ${owner} to be an object, got ${show(value)}`;
  for (const field of fields) {
    const number = value[field];
    if (!isFiniteNumber(number) || number < 0) {
      return `expected ${owner} "${field}" to be a number >= 0, got ${show(number)}`;
    }
  }
  return undefined;
}

/** Usage figures are summed into token estimates and budgets: all must be numbers. */
export function usageProblem(usage: unknown): string | undefined {
  return (
    numbersProblem(usage, USAGE_FIELDS, "the assistant message's usage") ??
    numbersProblem((usage as Fields).cost, COST_FIELDS, "the assistant message's usage.cost")
  );
}

const DECISIONS = new Set(["allow", "deny"]);

function decisionProblem(decision: unknown): string | undefined {
  if (decision === undefined) return undefined;
  if (!isObject(decision) || !DECISIONS.has(decision.decision as string)) {
    return `expected the tool result's "decision" to be { decision: "allow" | "deny", by, reason }`;
  }
  const where = "the tool result's decision: ";
  return (
    requireString(decision, "by", where) ??
    requireString(decision, "reason", where) ??
    optional(decision, "askedBy", "string", where)
  );
}

const ROLE_CHECKS: Record<string, (message: Fields) => string | undefined> = {
  user: (message) => userContentProblem(message.content, "the user message's"),
  assistant: (message) =>
    blocksProblem(message.content, ["text", "thinking", "toolCall"], "the assistant message's") ??
    requireString(message, "api", "the assistant message's ") ??
    requireString(message, "provider", "the assistant message's ") ??
    requireString(message, "model", "the assistant message's ") ??
    (typeof message.stopReason === "string" && STOP_REASONS.has(message.stopReason)
      ? undefined
      : `expected the assistant message's "stopReason" to be ${[...STOP_REASONS].join(", ")}, got ${show(message.stopReason)}`) ??
    optional(message, "errorMessage", "string", "the assistant message's ") ??
    usageProblem(message.usage),
  toolResult: (message) =>
    requireString(message, "toolCallId", "the tool result's ") ??
    requireString(message, "toolName", "the tool result's ") ??
    blocksProblem(message.content, ["text", "image"], "the tool result's") ??
    (typeof message.isError === "boolean"
      ? undefined
      : `expected the tool result's "isError" to be a boolean, got ${show(message.isError)}`) ??
    decisionProblem(message.decision),
};

/**
 * What is wrong with a stored message, if anything. Opening a session asks this of
 * every message, so the common shapes are accepted by `messageAccepted` first; the
 * full check below runs only for what it does not accept, and explains what is wrong.
 */
export function messageProblem(message: unknown): string | undefined {
  return messageAccepted(message) ? undefined : explainMessage(message);
}

/** The full check: `undefined`, or what is wrong with `message`. */
export function explainMessage(message: unknown): string | undefined {
  if (!isObject(message)) return `expected "message" to be an object, got ${show(message)}`;
  const check = typeof message.role === "string" && Object.hasOwn(ROLE_CHECKS, message.role);
  if (!check) {
    return `expected "message.role" to be "user", "assistant" or "toolResult", got ${show(message.role)}`;
  }
  if (message.timestamp !== undefined && !isFiniteNumber(message.timestamp)) {
    return `expected the message's "timestamp" to be a number, got ${show(message.timestamp)}`;
  }
  return (ROLE_CHECKS[message.role as string] as (message: Fields) => string | undefined)(message);
}

const isCount = (value: unknown) => typeof value === "number" && Number.isFinite(value) && value >= 0;
const isOptional = (value: unknown, type: "string" | "boolean") =>
  value === undefined || typeof value === type;

/**
 * A quick accept, with no message to build and no keyed loads: true only for a
 * message `explainMessage` accepts too (a test holds it to that); false sends it to
 * `explainMessage` for the verdict. Rare shapes (a tool result with a decision) are
 * left to the full check.
 */
export function messageAccepted(message: unknown): boolean {
  if (!isObject(message)) return false;
  const { timestamp } = message;
  if (timestamp !== undefined && !isFiniteNumber(timestamp)) return false;
  switch (message.role) {
    case "user":
      return typeof message.content === "string" || blocksAccepted(message.content, false);
    case "assistant":
      return (
        blocksAccepted(message.content, true) &&
        typeof message.api === "string" &&
        typeof message.provider === "string" &&
        typeof message.model === "string" &&
        typeof message.stopReason === "string" &&
        STOP_REASONS.has(message.stopReason) &&
        isOptional(message.errorMessage, "string") &&
        usageAccepted(message.usage)
      );
    case "toolResult":
      return (
        typeof message.toolCallId === "string" &&
        typeof message.toolName === "string" &&
        blocksAccepted(message.content, false) &&
        typeof message.isError === "boolean" &&
        message.decision === undefined
      );
    default:
      return false;
  }
}

/** Content blocks: text and image for user content and tool results; text, thinking and tool calls for an assistant. */
function blocksAccepted(content: unknown, assistant: boolean): boolean {
  if (!Array.isArray(content)) return false;
  for (let index = 0; index < content.length; index++) {
    const block: unknown = content[index];
    if (!isObject(block)) return false;
    switch (block.type) {
      case "text":
        if (typeof block.text !== "string" || !isOptional(block.textSignature, "string")) return false;
        break;
      case "image":
        if (assistant || typeof block.data !== "string" || typeof block.mimeType !== "string") return false;
        break;
      case "thinking":
        if (
          !assistant ||
          typeof block.thinking !== "string" ||
          !isOptional(block.thinkingSignature, "string") ||
          !isOptional(block.redacted, "boolean")
        )
          return false;
        break;
      case "toolCall":
        if (
          !assistant ||
          typeof block.id !== "string" ||
          typeof block.name !== "string" ||
          !isObject(block.arguments) ||
          !isOptional(block.thoughtSignature, "string")
        )
          return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

function usageAccepted(usage: unknown): boolean {
  if (!isObject(usage)) return false;
  const { cost } = usage;
  return (
    isCount(usage.input) &&
    isCount(usage.output) &&
    isCount(usage.cacheRead) &&
    isCount(usage.cacheWrite) &&
    isCount(usage.totalTokens) &&
    isObject(cost) &&
    isCount(cost.input) &&
    isCount(cost.output) &&
    isCount(cost.cacheRead) &&
    isCount(cost.cacheWrite) &&
    isCount(cost.total)
  );
}
