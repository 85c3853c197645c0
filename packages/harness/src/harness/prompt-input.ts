/** What `prompt()` accepts, and the user message it becomes. */
import type { ImageContent, TextContent, UserMessage } from "@earendil-works/pi-ai";
import { invalidArgument } from "../errors.js";
import type { AgentMessage } from "../session/entries.js";

export type PromptInput = string | (TextContent | ImageContent)[] | AgentMessage;

export function promptMessage(input: PromptInput): AgentMessage {
  if (typeof input === "string")
    return { role: "user", content: input, timestamp: Date.now() } satisfies UserMessage;
  if (Array.isArray(input))
    return { role: "user", content: input, timestamp: Date.now() } satisfies UserMessage;
  if (input && typeof input === "object" && typeof (input as { role?: unknown }).role === "string")
    return input;
  throw invalidArgument("prompt expects a string, a content array or a message");
}
