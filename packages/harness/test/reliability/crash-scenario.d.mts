/** Types of crash-scenario.mjs (plain JavaScript, so the child process runs it without a build). */
import type { AnyAgentTool } from "../../src/tools.js";

export interface PiHelpers {
  // biome-ignore lint/suspicious/noExplicitAny: pi-ai's helpers, passed through.
  Type: any;
  // biome-ignore lint/suspicious/noExplicitAny: pi-ai's helpers, passed through.
  fauxAssistantMessage: any;
  // biome-ignore lint/suspicious/noExplicitAny: pi-ai's helpers, passed through.
  fauxToolCall: any;
}
export function crashTools(pi: Pick<PiHelpers, "Type">): AnyAgentTool[];
// biome-ignore lint/suspicious/noExplicitAny: returns a pi-ai AssistantMessage.
export function respond(context: { messages: unknown[] }, pi: PiHelpers): any;
// biome-ignore lint/suspicious/noExplicitAny: any harness.
export function runScript(harness: any, accept: (kind: string, text: string) => void): Promise<void>;
// biome-ignore lint/suspicious/noExplicitAny: any harness.
export function runResume(harness: any, accept: (kind: string, text: string) => void): Promise<void>;
export function random(seed: number): () => number;
