/**
 * Token estimates for compaction decisions. No tokenizer: chars / 4 (rounded up,
 * plus a small per-message overhead), which over-counts English prose a little,
 * corrected by real usage figures when the provider reported them.
 *
 * Invariants: an assistant message that failed (`stopReason` error / aborted)
 * counts 0, since providers skip it when sending (pi-ai's transform); usage is
 * only trusted from a successful assistant message recorded after the latest
 * compaction (earlier figures measured a context that no longer exists).
 */
import type { AgentMessage, AssistantMessage } from "../session/entries.js";

const CHARS_PER_TOKEN = 4;
/** Role markers and separators a provider adds around each message. */
const MESSAGE_OVERHEAD = 4;
/** What an image costs, roughly, whatever its size. */
const IMAGE_TOKENS = 1_200;

export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** Estimated tokens one message adds to a request. */
export function estimateMessageTokens(message: AgentMessage): number {
  if (message.role === "assistant" && isFailed(message)) return 0;
  let chars = 0;
  let images = 0;
  const content = message.content;
  if (typeof content === "string") {
    chars += content.length;
  } else {
    for (const block of content) {
      switch (block.type) {
        case "text":
          chars += block.text.length;
          break;
        case "thinking":
          chars += block.thinking.length;
          break;
        case "toolCall":
          chars += block.name.length + JSON.stringify(block.arguments ?? {}).length;
          break;
        case "image":
          images++;
          break;
      }
    }
  }
  if (message.role === "toolResult") chars += message.toolName.length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS + MESSAGE_OVERHEAD;
}

/** Estimated tokens of the fixed part of a request: system prompt and tool definitions. */
export function estimateFixedTokens(
  systemPrompt: string | undefined,
  tools: readonly { name: string; description: string; parameters: unknown }[] = [],
): number {
  let tokens = systemPrompt ? estimateTextTokens(systemPrompt) : 0;
  for (const tool of tools) {
    tokens += estimateTextTokens(
      JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }),
    );
  }
  return tokens;
}

/** The context size a successful assistant message's usage reports (its request plus its output). */
export function usageTokens(message: AssistantMessage): number {
  const usage = message.usage;
  if (!usage) return 0;
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

export interface ContextEstimateOptions {
  /**
   * Estimated tokens of the system prompt and tool definitions (`estimateFixedTokens`);
   * a function is only called when no usage figure stands in for them.
   */
  fixedTokens?: number | (() => number);
  /** Usage figures of messages before this index are not trusted (they predate a compaction). */
  usableFrom?: number;
}

/**
 * Estimated tokens of a request sending `messages`. When a successful assistant
 * message at `usableFrom` or later reported usage, the latest such figure stands
 * for everything up to and including that message (system prompt and tools
 * too), and only the messages after it are estimated.
 */
export function estimateContextTokens(
  messages: readonly AgentMessage[],
  options: ContextEstimateOptions = {},
): number {
  const usableFrom = options.usableFrom ?? 0;
  for (let i = messages.length - 1; i >= usableFrom; i--) {
    const message = messages[i] as AgentMessage;
    if (message.role !== "assistant" || isFailed(message)) continue;
    const reported = usageTokens(message);
    if (reported <= 0) break;
    let tokens = reported;
    for (let j = i + 1; j < messages.length; j++)
      tokens += estimateMessageTokens(messages[j] as AgentMessage);
    return tokens;
  }
  const fixed = options.fixedTokens;
  let tokens = typeof fixed === "function" ? fixed() : (fixed ?? 0);
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}

function isFailed(message: AssistantMessage): boolean {
  return message.stopReason === "error" || message.stopReason === "aborted";
}
