/**
 * Writing a summary with the model: of the messages a compaction replaces, or
 * of a branch the user navigated away from.
 *
 * Invariants:
 * - the summary is structured (Goal / Progress / Decisions / Files touched /
 *   Next steps) and carries the previous summary forward: the model is asked to
 *   merge it, never to drop it;
 * - no summary request exceeds `inputBudget` (estimated): a conversation too
 *   long for one request is summarised in chunks, each chunk's summary carried
 *   into the next; a single message too long for a chunk is shortened in the middle;
 * - the call goes through the harness's stream function with the operation's
 *   signal, transient errors are retried like a run's requests, and a failure
 *   is a `HarnessError` (`compaction`, or `aborted`), never a half summary.
 */
import type { Context, Model } from "@earendil-works/pi-ai";
import { abortedError, HarnessError, HarnessErrorCode } from "../errors.js";
import type { RequestOptions } from "../hooks/hook-types.js";
import type { StreamFunction } from "../loop/loop-types.js";
import { isTransientError, type RetryPolicy, retryDelay, sleepUnlessAborted } from "../loop/retry.js";
import type { AgentMessage, AssistantMessage } from "../session/entries.js";
import { estimateTextTokens } from "./token-estimate.js";

export const SUMMARY_SYSTEM_PROMPT =
  "You write summaries of conversations between a user and an AI agent, so that the agent can " +
  "continue the work from the summary alone. Do not continue the conversation and do not answer " +
  "questions in it. Reply with the summary only, in the format you are given.";

export const SUMMARY_SECTIONS = ["Goal", "Progress", "Decisions", "Files touched", "Next steps"] as const;

/** Longest tool result text put into a summary request (the rest is elided in the middle). */
const TOOL_RESULT_CHARS = 4_000;
/** A chunk never gets fewer characters than this, whatever the budget says. */
const MIN_CHUNK_CHARS = 1_024;

export type SummaryKind = "compaction" | "branch";

export interface SummarizeOptions {
  kind: SummaryKind;
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  model: Model<any>;
  messages: readonly AgentMessage[];
  previousSummary?: string | undefined;
  /** Extra instructions from the caller (`compact({ instructions })`). */
  instructions?: string | undefined;
  /** Largest summary request, in estimated tokens; `undefined`: no limit. */
  inputBudget: number | undefined;
  maxTokens: number;
  signal: AbortSignal;
  streamFn: StreamFunction;
  requestOptions?: RequestOptions | undefined;
  retry?: RetryPolicy | undefined;
  onRetry?(info: {
    attempt: number;
    maxAttempts: number;
    delayMs: number;
    errorMessage: string;
  }): Promise<void>;
}

/** Writes the summary, in as many chunks as the budget needs. */
export async function summarize(options: SummarizeOptions): Promise<string> {
  const files = filesTouched(options.messages);
  const serialized = options.messages.map(serializeMessage).filter((text) => text !== "");
  let summary = options.previousSummary;
  let next = 0;
  do {
    const chunk = takeChunk(serialized, next, chunkBudgetChars(options, summary, files));
    next = chunk.next;
    const prompt = summaryPrompt({
      kind: options.kind,
      conversation: chunk.text,
      previousSummary: summary,
      instructions: options.instructions,
      files,
    });
    summary = await callModel(options, prompt);
  } while (next < serialized.length);
  return summary ?? "";
}

/** The conversation as plain text, one block per message. Failed assistant messages are left out. */
export function serializeMessage(message: AgentMessage): string {
  if (message.role === "user") return `[User]: ${contentText(message.content)}`;
  if (message.role === "toolResult") {
    const text = elide(contentText(message.content), TOOL_RESULT_CHARS);
    return `[Tool result ${message.toolName}${message.isError ? " (error)" : ""}]: ${text}`;
  }
  if (message.stopReason === "error" || message.stopReason === "aborted") return "";
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === "text" && block.text.trim() !== "") parts.push(`[Assistant]: ${block.text}`);
    else if (block.type === "thinking" && block.thinking.trim() !== "")
      parts.push(`[Assistant thinking]: ${block.thinking}`);
    else if (block.type === "toolCall")
      parts.push(`[Assistant tool call]: ${block.name} ${JSON.stringify(block.arguments ?? {})}`);
  }
  return parts.join("\n");
}

/** Paths named in tool call arguments (`path`, `file`, `filePath`, `file_path`, `filename`), in first-use order. */
export function filesTouched(messages: readonly AgentMessage[]): string[] {
  const files = new Set<string>();
  for (const message of messages) {
    if (message.role !== "assistant") continue;
    for (const block of message.content) {
      if (block.type !== "toolCall") continue;
      const args = (block.arguments ?? {}) as Record<string, unknown>;
      for (const key of ["path", "file", "filePath", "file_path", "filename"]) {
        const value = args[key];
        if (typeof value === "string" && value !== "") files.add(value);
      }
    }
  }
  return [...files];
}

export function summaryPrompt(input: {
  kind: SummaryKind;
  conversation: string;
  previousSummary?: string | undefined;
  instructions?: string | undefined;
  files?: readonly string[];
}): string {
  const parts: string[] = [];
  if (input.previousSummary !== undefined && input.previousSummary.trim() !== "") {
    parts.push(`<previous-summary>\n${input.previousSummary}\n</previous-summary>`);
  }
  parts.push(`<conversation>\n${input.conversation}\n</conversation>`);
  parts.push(
    input.kind === "compaction"
      ? "The conversation above is the oldest part of an ongoing session; it is about to be replaced by your summary."
      : "The conversation above is a branch the user has just left to continue from an earlier point; your summary tells the agent what was tried there.",
  );
  if (input.previousSummary !== undefined && input.previousSummary.trim() !== "") {
    parts.push(
      "Merge the previous summary with the new conversation into one updated summary: keep everything from the previous summary that still matters.",
    );
  }
  if (input.files && input.files.length > 0) {
    parts.push(`Files named in tool calls: ${input.files.join(", ")}`);
  }
  parts.push(
    [
      "Write the summary in exactly these sections (write 'none' where a section is empty):",
      "## Goal\nWhat the user wants to achieve.",
      "## Progress\nWhat has been done and what the results were.",
      "## Decisions\nChoices made, and why.",
      "## Files touched\nFiles read, created or changed, with one line each on what happened.",
      "## Next steps\nWhat remains to be done, in order.",
    ].join("\n\n"),
  );
  if (input.instructions !== undefined && input.instructions.trim() !== "") {
    parts.push(`Additional instructions:\n${input.instructions}`);
  }
  return parts.join("\n\n");
}

function chunkBudgetChars(
  options: SummarizeOptions,
  previousSummary: string | undefined,
  files: readonly string[],
): number {
  if (options.inputBudget === undefined) return Number.POSITIVE_INFINITY;
  const overhead =
    estimateTextTokens(SUMMARY_SYSTEM_PROMPT) +
    estimateTextTokens(
      summaryPrompt({
        kind: options.kind,
        conversation: "",
        previousSummary,
        instructions: options.instructions,
        files,
      }),
    ) +
    16; // role markers, separators, the chunk's own line breaks
  return Math.max(MIN_CHUNK_CHARS, (options.inputBudget - overhead) * 4);
}

/** The serialized messages from `start` that fit `budget` characters (at least one, shortened if need be). */
function takeChunk(serialized: readonly string[], start: number, budget: number) {
  const taken: string[] = [];
  let used = 0;
  let next = start;
  while (next < serialized.length) {
    const text = serialized[next] as string;
    const cost = text.length + 2;
    if (taken.length > 0 && used + cost > budget) break;
    const fitted = taken.length === 0 && cost > budget ? elide(text, Math.max(0, budget - 2)) : text;
    taken.push(fitted);
    used += fitted.length + 2;
    next++;
  }
  return { text: taken.join("\n\n"), next };
}

async function callModel(options: SummarizeOptions, prompt: string): Promise<string> {
  const context: Context = {
    systemPrompt: SUMMARY_SYSTEM_PROMPT,
    messages: [{ role: "user", content: [{ type: "text", text: prompt }], timestamp: Date.now() }],
  };
  const stream = options.streamFn;
  for (let attempt = 1; ; attempt++) {
    if (options.signal.aborted) throw abortedError("summary aborted");
    const message: AssistantMessage = await stream(options.model, context, {
      ...options.requestOptions,
      maxTokens: options.maxTokens,
      signal: options.signal,
    }).result();
    if (message.stopReason === "aborted" || options.signal.aborted) throw abortedError("summary aborted");
    if (message.stopReason === "error") {
      const retry = options.retry;
      if (retry && attempt < retry.maxAttempts && isTransientError(message, options.model)) {
        const delayMs = retryDelay(retry, attempt);
        await options.onRetry?.({
          attempt: attempt + 1,
          maxAttempts: retry.maxAttempts,
          delayMs,
          errorMessage: message.errorMessage ?? "provider error",
        });
        if (!(await sleepUnlessAborted(delayMs, options.signal))) throw abortedError("summary aborted");
        continue;
      }
      throw new HarnessError(
        HarnessErrorCode.compaction,
        `the model could not write the ${options.kind} summary: ${message.errorMessage ?? "provider error"}`,
      );
    }
    const text = message.content
      .flatMap((block) => (block.type === "text" ? [block.text] : []))
      .join("\n")
      .trim();
    if (text === "") {
      throw new HarnessError(HarnessErrorCode.compaction, `the model wrote an empty ${options.kind} summary`);
    }
    return text;
  }
}

function contentText(content: AgentMessage["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((block) => {
      if (block.type === "text") return block.text;
      if (block.type === "image") return "[image]";
      return "";
    })
    .filter((text) => text !== "")
    .join("\n");
}

/** `text` shortened to `max` characters by cutting out its middle. */
function elide(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = `\n[... ${text.length - max} characters omitted ...]\n`;
  const room = Math.max(0, max - marker.length);
  const head = Math.ceil(room / 2);
  return text.slice(0, head) + marker + text.slice(text.length - (room - head));
}
