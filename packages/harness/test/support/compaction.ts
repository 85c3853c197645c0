/** Helpers for compaction, retry and navigation tests: recognising summary requests, sizing requests. */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { type Context, fauxAssistantMessage } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { SUMMARY_SYSTEM_PROMPT } from "../../src/compaction/summarize.js";
import type { AgentMessage } from "../../src/session/entries.js";
import type { AnyAgentTool } from "../../src/tools.js";
import type { RecordedRequest } from "./scripted-model.js";

export const isSummaryRequest = (request: RecordedRequest) =>
  request.context.systemPrompt === SUMMARY_SYSTEM_PROMPT;

/** The text of a summary request's single user message. */
export function summaryPromptText(request: RecordedRequest): string {
  const message = request.context.messages[0];
  if (message?.role !== "user") throw new Error("not a summary request");
  return typeof message.content === "string"
    ? message.content
    : message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/** A structured summary, as a model would write it. */
export const summaryReply = (label: string) =>
  fauxAssistantMessage(
    `## Goal\n${label}\n\n## Progress\nsome\n\n## Decisions\nnone\n\n## Files touched\nnone\n\n## Next steps\ngo on`,
  );

export const providerError = (errorMessage: string) =>
  fauxAssistantMessage([], { stopReason: "error", errorMessage });

/** Text of any message, for assertions. */
export function textOf(message: AgentMessage | undefined): string {
  if (!message) return "";
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) => {
      if (block.type === "text") return block.text;
      if (block.type === "toolCall") return `${block.name}:${JSON.stringify(block.arguments)}`;
      return "";
    })
    .join("\n");
}

/**
 * Tokens the faux provider counts for a request: its own serialization (system
 * prompt, `role:text` per message, tool JSON) divided by 4, which is also what it
 * reports as input usage.
 */
export function fauxPromptTokens(context: Context): number {
  const parts: string[] = [];
  if (context.systemPrompt) parts.push(`system:${context.systemPrompt}`);
  for (const message of context.messages) {
    let text: string;
    if (message.role === "toolResult") {
      text = [message.toolName, ...message.content.map((b) => (b.type === "text" ? b.text : "[image]"))].join(
        "\n",
      );
    } else {
      text = textOf(message as AgentMessage);
    }
    parts.push(`${message.role}:${text}`);
  }
  if (context.tools?.length) parts.push(`tools:${JSON.stringify(context.tools)}`);
  return Math.ceil(parts.join("\n\n").length / 4);
}

/** A `read` tool taking a `path`, answering with `size` characters. */
export function readTool(size = 40): AnyAgentTool {
  return {
    name: "read",
    description: "Read a file",
    parameters: Type.Object({ path: Type.String() }),
    risk: "read",
    execute: async (args) => ({
      content: [{ type: "text", text: `${(args as { path: string }).path}: ${"r".repeat(size)}` }],
    }),
  } as AnyAgentTool;
}

const dirs: string[] = [];
export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-compaction-"));
  dirs.push(dir);
  return dir;
}
export function removeTempDirs(): void {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}
