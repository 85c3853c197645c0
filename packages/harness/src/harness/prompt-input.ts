/** What `prompt()` accepts, and the user message it becomes. */
import type { ImageContent, TextContent, UserMessage } from "@earendil-works/pi-ai";
import { invalidArgument } from "../errors.js";
import type { AgentMessage } from "../session/entries.js";

export type PromptInput = string | (TextContent | ImageContent)[] | AgentMessage;

/** How a run goes, recorded in its `run_start` journal record so `rein replay` runs it the same way. */
export interface RunOptions {
  /**
   * End the run once a turn's tool calls are all answered, instead of asking the
   * model again with their results. Everything before is unchanged (gates,
   * permissions, `toolResult`, events, the session); steering, follow-ups and a
   * `beforeStop` continuation still get their turns. For a caller that only wants
   * the calls run through the stack (`rein mcp serve`): the model's closing turn
   * would be wasted.
   */
  stopAfterTools?: boolean;
}

/** Throws `invalid_argument` naming an unknown option or a bad value; returns nothing to spread. */
export function checkRunOptions(options: RunOptions): Record<string, never> {
  if (typeof options !== "object" || options === null)
    throw invalidArgument("prompt options: expected an object");
  for (const [key, value] of Object.entries(options)) {
    if (key !== "stopAfterTools")
      throw invalidArgument(`prompt options: unknown option "${key}" (known: stopAfterTools)`);
    if (value !== undefined && typeof value !== "boolean")
      throw invalidArgument("prompt options: stopAfterTools expects a boolean");
  }
  return {};
}

export function promptMessage(input: PromptInput): AgentMessage {
  if (typeof input === "string")
    return { role: "user", content: input, timestamp: Date.now() } satisfies UserMessage;
  if (Array.isArray(input))
    return { role: "user", content: input, timestamp: Date.now() } satisfies UserMessage;
  if (input && typeof input === "object" && typeof (input as { role?: unknown }).role === "string")
    return input;
  throw invalidArgument("prompt expects a string, a content array or a message");
}
