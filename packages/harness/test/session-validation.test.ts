/**
 * Open validates every line down to content blocks, usage numbers and journal payloads:
 * each damaged entry below is refused at open with a `session` error naming the file
 * and the line, and the same entry is refused at append with `invalid_argument` (a
 * session never writes what it would refuse to load). Each one, accepted, used to
 * break every later prompt or recovery.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { HarnessError } from "../src/errors.js";
import { createSessionHeader, JsonlStorage, Session } from "../src/session/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const usage = {
  input: 1,
  output: 2,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 3,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = {
  role: "assistant",
  content: [
    { type: "text", text: "hi" },
    { type: "toolCall", id: "c1", name: "echo", arguments: { a: 1 } },
  ],
  api: "faux",
  provider: "faux",
  model: "faux-1",
  usage,
  stopReason: "toolUse",
  timestamp: 1,
};
const toolResult = {
  role: "toolResult",
  toolCallId: "c1",
  toolName: "echo",
  content: [{ type: "text", text: "ok" }],
  isError: false,
  timestamp: 1,
};
const userMessage = { role: "user", content: [{ type: "text", text: "q" }], timestamp: 1 };

const message = (value: unknown) => ({ type: "message", message: value });
const journal = (fields: Record<string, unknown>) => ({ type: "journal", ...fields });
const withField = (base: Record<string, unknown>, patch: Record<string, unknown>) => ({ ...base, ...patch });

/** [what is wrong, the entry fields (id, parentId and timestamp are added)]. */
const BAD: [string, Record<string, unknown>][] = [
  ["user content [null]", message(withField(userMessage, { content: [null] }))],
  ["user content block without type", message(withField(userMessage, { content: [{ text: "x" }] }))],
  [
    "user text block with a number text",
    message(withField(userMessage, { content: [{ type: "text", text: 1 }] })),
  ],
  [
    "user image block without mimeType",
    message(withField(userMessage, { content: [{ type: "image", data: "x" }] })),
  ],
  [
    "user content block of an assistant type",
    message(withField(userMessage, { content: [{ type: "thinking", thinking: "x" }] })),
  ],
  ["user content a number", message(withField(userMessage, { content: 5 }))],
  ["assistant content [null]", message(withField(assistant, { content: [null] }))],
  [
    "assistant tool call without id",
    message(withField(assistant, { content: [{ type: "toolCall", name: "echo", arguments: {} }] })),
  ],
  [
    "assistant tool call with array arguments",
    message(withField(assistant, { content: [{ type: "toolCall", id: "c", name: "echo", arguments: [] }] })),
  ],
  [
    "assistant thinking block with a numeric signature",
    message(withField(assistant, { content: [{ type: "thinking", thinking: "t", thinkingSignature: 1 }] })),
  ],
  [
    "assistant image block",
    message(withField(assistant, { content: [{ type: "image", data: "x", mimeType: "image/png" }] })),
  ],
  [
    'assistant usage totalTokens "x"',
    message(withField(assistant, { usage: { ...usage, totalTokens: "x" } })),
  ],
  ["assistant usage input negative", message(withField(assistant, { usage: { ...usage, input: -1 } }))],
  ["assistant usage without cost", message(withField(assistant, { usage: { ...usage, cost: undefined } }))],
  [
    "assistant usage cost total null",
    message(withField(assistant, { usage: { ...usage, cost: { ...usage.cost, total: null } } })),
  ],
  ["assistant without usage", message(withField(assistant, { usage: undefined }))],
  ["assistant stopReason unknown", message(withField(assistant, { stopReason: "done" }))],
  ["assistant model a number", message(withField(assistant, { model: 7 }))],
  ["assistant errorMessage an object", message(withField(assistant, { errorMessage: {} }))],
  ["tool result without toolName", message(withField(toolResult, { toolName: undefined }))],
  ["tool result without toolCallId", message(withField(toolResult, { toolCallId: undefined }))],
  ["tool result content [null]", message(withField(toolResult, { content: [null] }))],
  ["tool result with a tool call block", message(withField(toolResult, { content: assistant.content }))],
  ['tool result isError "no"', message(withField(toolResult, { isError: "no" }))],
  [
    "tool result decision without by",
    message(withField(toolResult, { decision: { decision: "deny", reason: "r" } })),
  ],
  ["message timestamp a string", message(withField(userMessage, { timestamp: "now" }))],
  [
    "custom message content [null]",
    { type: "custom_message", customType: "n", content: [null], display: true },
  ],
  [
    "queue_push of a tool result",
    journal({ event: "queue_push", queue: "steer", queueId: "q", message: toolResult }),
  ],
  [
    "queue_push of an assistant message",
    journal({ event: "queue_push", queue: "followUp", queueId: "q", message: assistant }),
  ],
  [
    "queue_push of a user message with bad content",
    journal({
      event: "queue_push",
      queue: "nextTurn",
      queueId: "q",
      message: withField(userMessage, { content: [null] }),
    }),
  ],
  ["run_start with stopAfterTools false", journal({ event: "run_start", runId: "r", stopAfterTools: false })],
  [
    "pending_write of a message",
    journal({ event: "pending_write", pendingId: "p", input: message(userMessage) }),
  ],
  [
    "pending_write of a leaf move",
    journal({ event: "pending_write", pendingId: "p", input: { type: "leaf", targetId: null } }),
  ],
  [
    "pending_write of a model change without modelId",
    journal({ event: "pending_write", pendingId: "p", input: { type: "model_change", provider: "faux" } }),
  ],
  [
    "pending_write of a label with a numeric label",
    journal({ event: "pending_write", pendingId: "p", input: { type: "label", targetId: "a", label: 3 } }),
  ],
  [
    "pending_write of custom content [null]",
    journal({
      event: "pending_write",
      pendingId: "p",
      input: { type: "custom_message", customType: "n", content: [null], display: true },
    }),
  ],
];

/** A valid file of a user message, an assistant tool call and its result, then `bad` in the middle. */
function fileWith(bad: Record<string, unknown>): { file: string; line: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-validate-"));
  dirs.push(dir);
  const file = path.join(dir, "s.jsonl");
  const entries = [
    { id: "u", parentId: null, timestamp: 1, ...message(userMessage) },
    { id: "a", parentId: "u", timestamp: 1, ...message(assistant) },
    { id: "bad", parentId: "a", timestamp: 1, ...bad },
    { id: "r", parentId: "a", timestamp: 1, ...message(toolResult) },
  ];
  const lines = [createSessionHeader(), ...entries].map((line) => `${JSON.stringify(line)}\n`);
  fs.writeFileSync(file, lines.join(""));
  return { file, line: 4 };
}

describe("validation at open, down to content blocks, usage and journal payloads", () => {
  it("the valid file these cases damage opens", () => {
    const { file } = fileWith({ type: "custom", customType: "fine" });
    const session = Session.open(JsonlStorage.open(file));
    expect(session.entries()).toHaveLength(4);
    session.close();
  });

  it.each(BAD)("%s: refused at open with a session error naming file and line", (_what, bad) => {
    const { file, line } = fileWith(bad);
    const before = fs.readFileSync(file);
    let thrown: unknown;
    try {
      Session.open(JsonlStorage.open(file));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HarnessError);
    expect(thrown).toMatchObject({ code: "session", file });
    expect((thrown as Error).message).toContain(`${file} line ${line}: `);
    expect(fs.readFileSync(file)).toEqual(before);
    expect(fs.existsSync(`${file}.lock`)).toBe(false); // a refused open releases its lock
  });

  it.each(BAD)("%s: refused at append with invalid_argument, nothing written", (_what, bad) => {
    const { file } = fileWith({ type: "custom", customType: "fine" });
    const session = Session.open(JsonlStorage.open(file));
    const size = fs.statSync(file).size;
    let thrown: unknown;
    try {
      if (bad.type === "journal") {
        const { type: _type, ...record } = bad;
        session.appendJournal(record as never);
      } else if (bad.type === "message") session.appendMessage(bad.message as never);
      else session.append(bad as never);
    } catch (error) {
      thrown = error;
    }
    session.close();
    expect(thrown).toMatchObject({ code: "invalid_argument" });
    expect(fs.statSync(file).size).toBe(size);
  });
});
