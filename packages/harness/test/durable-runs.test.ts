import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AgentHarness, type AgentHarnessOptions } from "../src/harness/agent-harness.js";
import {
  INTERRUPTED_NOT_RUN,
  INTERRUPTED_UNKNOWN,
  INTERRUPTED_UNRECORDED,
  RETRY_NOTE,
} from "../src/harness/recovery.js";
import type { AgentMessage, JournalEntry, SessionEntry } from "../src/session/entries.js";
import { JsonlStorage } from "../src/session/jsonl-storage.js";
import { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/session-store.js";
import { createSessionHeader } from "../src/session/storage.js";
import { echoTool, fixture, gate } from "./support/harness-fixture.js";
import { callTools, reply, scriptedModel } from "./support/scripted-model.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A JSONL session in a fresh directory. */
function jsonlSession() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-durable-"));
  dirs.push(dir);
  const file = path.join(dir, "session.jsonl");
  const session = Session.create(JsonlStorage.create(file, createSessionHeader({ cwd: dir })));
  let copies = 0;
  return {
    session,
    file,
    /** What a SIGKILL right now would leave on disk: the file's bytes, as a new file. */
    crashCopy() {
      const copy = path.join(dir, `crash-${copies++}.jsonl`);
      fs.copyFileSync(file, copy);
      return copy;
    },
  };
}

const reopen = (file: string) => Session.open(JsonlStorage.open(file));

const journalEvents = (session: Session) => session.journal().map((record) => record.event);

const textOf = (message: AgentMessage | undefined) => {
  if (message === undefined) return undefined;
  const { content } = message;
  if (typeof content === "string") return content;
  return content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("");
};

const userTexts = (session: Session) =>
  session
    .buildContext()
    .messages.filter((m) => m.role === "user")
    .map(textOf);

/** Every tool call on the branch has exactly one result. */
function assertEveryCallAnswered(session: Session) {
  const calls: string[] = [];
  const results: string[] = [];
  for (const entry of session.branch()) {
    if (entry.type !== "message") continue;
    const { message } = entry;
    if (message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted") {
      for (const block of message.content) if (block.type === "toolCall") calls.push(block.id);
    }
    if (message.role === "toolResult") results.push(message.toolCallId);
  }
  expect(results.sort()).toEqual(calls.sort());
}

function harnessOn(
  session: Session,
  scripted: ReturnType<typeof scriptedModel>,
  options: Partial<AgentHarnessOptions> = {},
) {
  return new AgentHarness({ session, model: scripted.model, models: scripted.collection, ...options });
}

describe("durable runs: the journal", () => {
  it("journals run, turn and tool-call boundaries as records kept out of entries() and context", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "a" }, "c1"]), reply("done")]);
    await f.harness.prompt("go");
    expect(journalEvents(f.session)).toEqual([
      "run_start",
      "turn_start",
      "tool_start",
      "tool_end",
      "turn_end",
      "turn_start",
      "turn_end",
      "run_end",
    ]);
    expect(f.session.journal().at(-1)).toMatchObject({ event: "run_end", status: "completed" });
    expect(f.session.journal()[2]).toMatchObject({ event: "tool_start", toolCallId: "c1", toolName: "echo" });
    expect(f.session.entries().some((entry) => (entry as { type: string }).type === "journal")).toBe(false);
    expect(f.messages().map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    // Journal records are not nodes: every tree entry's parent is the previous one.
    const branch = f.session.branch();
    branch.forEach((entry, i) => {
      expect(entry.parentId).toBe(i === 0 ? null : branch[i - 1]?.id);
    });
  });

  it("journal records survive a reopen, keep their order and never enter the rebuilt context", async () => {
    const { session, file } = jsonlSession();
    const scripted = scriptedModel();
    const harness = harnessOn(session, scripted, { tools: [echoTool().tool] });
    scripted.script([callTools(["echo", { text: "a" }]), reply("done")]);
    await harness.prompt("go");
    const journal = session.journal().map((record) => record.id);
    const context = session.buildContext();
    session.close();
    const again = reopen(file);
    expect(again.journal().map((record) => record.id)).toEqual(journal);
    expect(again.buildContext()).toEqual(context);
    again.close();
  });

  it("a blocked run and a failed run end with their status in the journal", async () => {
    const blocked = fixture();
    blocked.harness.hooks.beforeRun.tapPromise("blocker", async () => ({
      systemPrompt: "",
      messages: [],
      block: { reason: "no" },
    }));
    await blocked.harness.prompt("go");
    expect(blocked.session.journal().at(-1)).toMatchObject({ event: "run_end", status: "blocked" });

    const failed = fixture();
    failed.harness.hooks.beforeRequest.tapPromise("broken", async () => {
      throw new Error("boom");
    });
    failed.scripted.script([reply("never")]);
    await expect(failed.harness.prompt("go")).rejects.toMatchObject({ code: "hook" });
    expect(failed.session.journal().at(-1)).toMatchObject({ event: "run_end", status: "error" });
  });

  it("a queued message is journaled when accepted, even while busy, and its injection records the queue id", async () => {
    const hold = gate();
    const released = gate();
    const echo = echoTool({
      execute: async () => {
        hold.open();
        await released.opened;
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("after steer"), reply("after follow-up")]);
    const run = f.harness.prompt("go");
    await hold.opened;
    f.harness.steer("turn left");
    f.harness.followUp("then stop");
    const pushes = f.session.journal().filter((r) => r.event === "queue_push");
    expect(pushes.map((r) => (r as Extract<JournalEntry, { event: "queue_push" }>).queue)).toEqual([
      "steer",
      "followUp",
    ]);
    released.open();
    await run;
    const ids = pushes.map((r) => (r as Extract<JournalEntry, { event: "queue_push" }>).queueId);
    const carriers = f.session
      .entries()
      .filter(
        (e): e is Extract<SessionEntry, { type: "message" }> =>
          e.type === "message" && e.queueIds !== undefined,
      );
    expect(carriers.map((e) => [textOf(e.message), e.queueIds])).toEqual([
      ["turn left", [ids[0]]],
      ["then stop", [ids[1]]],
    ]);
  });

  it("a pending write is journaled when accepted and its committed entry carries the pending id", async () => {
    const f = fixture();
    f.harness.on("turn_start", () => {
      f.harness.appendEntry({ type: "custom", customType: "note", data: 1 });
    });
    f.scripted.script([reply("hi")]);
    await f.harness.prompt("go");
    const journaled = f.session.journal().find((r) => r.event === "pending_write") as Extract<
      JournalEntry,
      { event: "pending_write" }
    >;
    expect(journaled.input).toMatchObject({ type: "custom", customType: "note" });
    expect(f.session.entries().find((e) => e.type === "custom")?.pendingId).toBe(journaled.pendingId);
  });
});

describe("durable runs: recovery on open", () => {
  it("a tool that started and has no result gets an interrupted error result, the run is closed, and a new prompt works", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    let crash = "";
    const echo = echoTool({
      execute: async () => {
        crash = crashCopy();
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const harness = harnessOn(session, scripted, { tools: [echo.tool] });
    scripted.script([callTools(["echo", { text: "x" }, "c1"]), reply("done")]);
    await harness.prompt("go");
    session.close();

    const reopened = reopen(crash);
    const recovering = harnessOn(reopened, scripted, { tools: [echo.tool] });
    const runId = reopened.journal()[0] as Extract<JournalEntry, { event: "run_start" }>;
    expect(recovering.recovery).toMatchObject({
      interruptedRunId: runId.runId,
      toolResults: [
        { toolCallId: "c1", toolName: "echo", started: true, completed: false, idempotent: false },
      ],
    });
    const last = reopened.buildContext().messages.at(-1);
    expect(last).toMatchObject({ role: "toolResult", toolCallId: "c1", isError: true });
    expect(textOf(last)).toBe(INTERRUPTED_UNKNOWN);
    expect(reopened.journal().at(-1)).toMatchObject({ event: "run_end", status: "interrupted" });
    expect(reopened.warnings.some((w) => w.startsWith("recovery:"))).toBe(true);

    scripted.script([reply("continuing")]);
    const outcome = await recovering.prompt("again");
    expect(outcome.status).toBe("completed");
    expect(scripted.requests.at(-1)?.context.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "user",
    ]);
    assertEveryCallAnswered(reopened);
    reopened.close();
  });

  it("an idempotent tool's interrupted result says it may be retried", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    let crash = "";
    const echo = echoTool({
      idempotent: true,
      execute: async () => {
        crash = crashCopy();
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const harness = harnessOn(session, scripted, { tools: [echo.tool] });
    scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await harness.prompt("go");
    session.close();
    const reopened = reopen(crash);
    const recovering = harnessOn(reopened, scripted, { tools: [echo.tool] });
    expect(recovering.recovery?.toolResults[0]?.idempotent).toBe(true);
    expect(textOf(reopened.buildContext().messages.at(-1))).toBe(`${INTERRUPTED_UNKNOWN}${RETRY_NOTE}`);
    reopened.close();
  });

  it("calls that never started say so, and a tool that finished but was not recorded says that", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    const crashes: string[] = [];
    const echo = echoTool({ executionMode: "sequential" });
    const harness = harnessOn(session, scripted, { tools: [echo.tool] });
    // After the first call finished (tool_end journaled), before the second started.
    harness.on("tool_execution_end", () => {
      if (crashes.length === 0) crashes.push(crashCopy());
    });
    scripted.script([callTools(["echo", { text: "1" }, "c1"], ["echo", { text: "2" }, "c2"]), reply("done")]);
    await harness.prompt("go");
    session.close();
    const reopened = reopen(crashes[0] as string);
    const recovering = harnessOn(reopened, scripted, { tools: [echo.tool] });
    expect(recovering.recovery?.toolResults.map((c) => [c.toolCallId, c.started, c.completed])).toEqual([
      ["c1", true, true],
      ["c2", false, false],
    ]);
    const results = reopened.buildContext().messages.slice(-2);
    expect(results.map(textOf)).toEqual([INTERRUPTED_UNRECORDED, INTERRUPTED_NOT_RUN]);
    assertEveryCallAnswered(reopened);
    reopened.close();
  });

  it("a run killed before the model answered is closed with an aborted assistant message", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    let crash = "";
    const harness = harnessOn(session, scripted);
    harness.hooks.beforeRequest.tapPromise("crash", async (request) => {
      crash ||= crashCopy();
      return request;
    });
    scripted.script([reply("hi")]);
    await harness.prompt("hello");
    session.close();
    const reopened = reopen(crash);
    const recovering = harnessOn(reopened, scripted);
    expect(recovering.recovery?.closedTurn).toBe(true);
    expect(
      reopened.buildContext().messages.map((m) => [m.role, (m as { stopReason?: string }).stopReason]),
    ).toEqual([
      ["user", undefined],
      ["assistant", "aborted"],
    ]);
    reopened.close();
  });

  it("queued messages accepted before a crash are restored in order; consumed and cleared ones are not", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    let crash = "";
    const hold = gate();
    const harness = harnessOn(session, scripted, {
      tools: [
        echoTool({
          execute: async (args) => {
            if ((args as { text: string }).text === "crash") {
              crash = crashCopy();
              hold.open();
            }
            return { content: [{ type: "text", text: "ok" }] };
          },
        }).tool,
      ],
    });
    harness.nextTurn("nt consumed");
    // The second turn crashes inside a tool while s2, f1, nt2 wait in their queues.
    scripted.script([
      callTools(["echo", { text: "first" }]),
      callTools(["echo", { text: "crash" }]),
      reply("a"),
      reply("b"),
      reply("c"),
      reply("d"),
    ]);
    harness.on("turn_end", () => {
      if (crash === "") {
        harness.steer("s1 consumed");
        harness.steer("s2 waiting");
        harness.followUp("f1 waiting");
        harness.nextTurn("nt2 waiting");
      }
    });
    await harness.prompt("go");
    session.close();
    const reopened = reopen(crash);
    const recovering = harnessOn(reopened, scripted, { tools: [echoTool().tool] });
    expect(recovering.recovery?.queues).toEqual({ steer: 1, followUp: 1, nextTurn: 1 });
    expect(userTexts(reopened)).toEqual(["nt consumed", "go", "s1 consumed"]);

    scripted.script([reply("1"), reply("2"), reply("3")]);
    await recovering.prompt("resume");
    expect(userTexts(reopened)).toEqual([
      "nt consumed",
      "go",
      "s1 consumed",
      "nt2 waiting",
      "resume",
      "s2 waiting",
      "f1 waiting",
    ]);
    reopened.close();
  });

  it("messages cleared by abort are not restored, next-turn ones are", async () => {
    const { session, file } = jsonlSession();
    const scripted = scriptedModel();
    const started = gate();
    const tool = echoTool({
      execute: (_args, context) =>
        new Promise((resolve) => {
          started.open();
          context.signal.addEventListener("abort", () =>
            resolve({ content: [{ type: "text", text: "x" }], isError: true }),
          );
        }),
    }).tool;
    const harness = harnessOn(session, scripted, { tools: [tool] });
    scripted.script([callTools(["echo", { text: "slow" }])]);
    const run = harness.prompt("go");
    await started.opened;
    harness.steer("dropped s");
    harness.followUp("dropped f");
    harness.nextTurn("kept n");
    harness.abort();
    await run;
    session.close();
    const reopened = reopen(file);
    const again = harnessOn(reopened, scripted, { tools: [tool] });
    expect(again.recovery?.queues).toEqual({ steer: 0, followUp: 0, nextTurn: 1 });
    expect(again.queued("nextTurn")).toBe(1);
    reopened.close();
  });

  it("a pending write accepted before a crash is committed once on open, and never again", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    let crash = "";
    const harness = harnessOn(session, scripted);
    harness.on("message_end", (event) => {
      if (event.message.role !== "assistant") return;
      harness.appendEntry({ type: "custom", customType: "note", data: "pending" });
      harness.setThinkingLevel("low");
      crash ||= crashCopy();
    });
    scripted.script([reply("hi")]);
    await harness.prompt("hello");
    session.close();

    const reopened = reopen(crash);
    const recovering = harnessOn(reopened, scripted);
    expect(recovering.recovery?.pendingWrites).toBe(2);
    const tail = reopened.branch().slice(-2);
    expect(tail.map((e) => e.type)).toEqual(["custom", "thinking_level_change"]);
    expect(tail.every((e) => typeof e.pendingId === "string")).toBe(true);
    reopened.close();

    const twice = reopen(crash);
    const again = harnessOn(twice, scripted);
    expect(again.recovery).toBeUndefined();
    expect(twice.entries().filter((e) => e.type === "custom")).toHaveLength(1);
    twice.close();
  });

  it("a beforeRun tap that rewrites next-turn messages consumes them: they are not restored after a crash", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    let crash = "";
    const harness = harnessOn(session, scripted);
    harness.hooks.beforeRun.tapPromise("rewriter", async (payload) => ({
      ...payload,
      messages: payload.messages.map((m) => ({ ...m })),
    }));
    harness.on("message_end", () => {
      crash ||= crashCopy();
    });
    harness.nextTurn("context");
    scripted.script([reply("hi")]);
    await harness.prompt("hello");
    session.close();
    const reopened = reopen(crash);
    const recovering = harnessOn(reopened, scripted);
    expect(recovering.queued("nextTurn")).toBe(0);
    expect(reopened.entries().find((e) => e.type === "message")).toMatchObject({
      queueIds: [expect.any(String)],
    });
    reopened.close();
  });

  it("next-turn messages survive a beforeRun tap that throws (in process and after a reopen)", async () => {
    const { session, file } = jsonlSession();
    const scripted = scriptedModel();
    const harness = harnessOn(session, scripted);
    harness.nextTurn("keep me");
    harness.hooks.beforeRun.tapPromise("broken", async () => {
      throw new Error("boom");
    });
    await expect(harness.prompt("go")).rejects.toMatchObject({ code: "hook", plugin: "broken" });
    expect(harness.queued("nextTurn")).toBe(1);
    session.close();
    const again = harnessOn(reopen(file), scripted);
    expect(again.queued("nextTurn")).toBe(1);
    expect(again.recovery?.interruptedRunId).toBeUndefined();
    again.session.close();
  });

  it("recovery runs once per session object, can be turned off, and is absent when nothing was open", async () => {
    const f = fixture();
    f.scripted.script([reply("hi")]);
    await f.harness.prompt("go");
    f.harness.nextTurn("later");
    const second = new AgentHarness({
      session: f.session,
      model: f.scripted.model,
      models: f.scripted.collection,
    });
    expect(second.recovery).toBeUndefined();
    expect(second.queued("nextTurn")).toBe(0);

    const { session, file } = jsonlSession();
    const h = harnessOn(session, f.scripted);
    h.nextTurn("durable");
    session.close();
    const off = harnessOn(reopen(file), f.scripted, { recover: false });
    expect(off.recovery).toBeUndefined();
    expect(off.queued("nextTurn")).toBe(0);
    off.session.close();
    const on = harnessOn(reopen(file), f.scripted);
    expect(on.queued("nextTurn")).toBe(1);
    on.session.close();
  });

  it("recovery over a read-only session reports a warning instead of throwing", async () => {
    const { session, crashCopy } = jsonlSession();
    const scripted = scriptedModel();
    let crash = "";
    const echo = echoTool({
      execute: async () => {
        crash = crashCopy();
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const harness = harnessOn(session, scripted, { tools: [echo.tool] });
    scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await harness.prompt("go");
    session.close();
    const readOnly = Session.open(JsonlStorage.open(crash, { readOnly: true }));
    const recovering = harnessOn(readOnly, scripted, { tools: [echo.tool] });
    expect(recovering.recovery?.warnings[0]).toMatch(/recovery could not write/);
    expect(readOnly.buildContext().messages.at(-1)?.role).toBe("assistant");
  });

  it("an ENOSPC while a run appends rejects the prompt with a session error and the file reopens consistent", async () => {
    const { session, file } = jsonlSession();
    const scripted = scriptedModel();
    const echo = echoTool();
    const harness = harnessOn(session, scripted, { tools: [echo.tool] });
    const realWrite = fs.writeSync;
    let failed = false;
    const spy = vi.spyOn(fs, "writeSync").mockImplementation(((...args: Parameters<typeof fs.writeSync>) => {
      const data = args[1];
      if (!failed && Buffer.isBuffer(data) && data.includes('"role":"toolResult"')) {
        failed = true;
        throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
      }
      return (realWrite as (...a: unknown[]) => number)(...args);
    }) as typeof fs.writeSync);
    try {
      scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
      await expect(harness.prompt("go")).rejects.toMatchObject({ code: "session" });
    } finally {
      spy.mockRestore();
    }
    expect(failed).toBe(true);
    expect(harness.phase).toBe("idle");
    session.close();
    const reopened = reopen(file);
    const recovering = harnessOn(reopened, scripted, { tools: [echo.tool] });
    expect(reopened.warnings.filter((w) => w.includes("torn"))).toEqual([]);
    assertEveryCallAnswered(reopened);
    scripted.script([reply("again")]);
    await expect(recovering.prompt("again")).resolves.toMatchObject({ status: "completed" });
    reopened.close();
  });

  it("a session file deleted during a run fails the run with a session error and is never recreated", async () => {
    const { session, file } = jsonlSession();
    const scripted = scriptedModel();
    const echo = echoTool({
      execute: async () => {
        fs.rmSync(file);
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const harness = harnessOn(session, scripted, { tools: [echo.tool] });
    scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await expect(harness.prompt("go")).rejects.toMatchObject({ code: "session" });
    expect(fs.existsSync(file)).toBe(false);
    session.close();
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("durable runs: recovery closes the interrupted turn wherever the leaf stands", () => {
  const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });
  /** A session killed mid-run after `question`, with `after` written behind it (the leaf). */
  function killedAfter(after: (session: Session, question: SessionEntry) => void) {
    const { session, file } = jsonlSession();
    session.appendMessage(user("earlier"));
    session.appendJournal({ event: "run_start", runId: "r1" });
    const question = session.appendMessage(user("question"));
    after(session, question);
    session.close();
    return file;
  }
  const LEAVES: [string, (session: Session, question: SessionEntry) => void][] = [
    ["the user message", () => undefined],
    [
      "a compaction (auto-compaction before the request)",
      (session, question) =>
        session.append({ type: "compaction", summary: "s", firstKeptEntryId: question.id, tokensBefore: 9 }),
    ],
    [
      "a compaction that kept nothing",
      (session, question) =>
        session.append({
          type: "compaction",
          summary: "s",
          firstKeptEntryId: `${question.id}-gone`,
          tokensBefore: 9,
        }),
    ],
    ["a model change", (session) => session.append({ type: "model_change", provider: "faux", modelId: "m" })],
    ["a label", (session, question) => session.setLabel(question.id, "here")],
    ["a custom entry", (session) => session.append({ type: "custom", customType: "note" })],
    [
      "a custom message",
      (session) =>
        session.append({ type: "custom_message", customType: "n", content: "ctx", display: false }),
    ],
  ];

  it.each(LEAVES)(
    "leaf on %s: one aborted assistant message closes the turn, and a prompt works",
    async (_, after) => {
      const reopened = reopen(killedAfter(after));
      const scripted = scriptedModel();
      const recovering = harnessOn(reopened, scripted);
      expect(recovering.recovery).toMatchObject({ closedTurn: true, interruptedRunId: "r1" });
      const roles = reopened.buildContext().messages.map((m) => m.role);
      expect(roles.at(-1)).toBe("assistant");
      expect(reopened.buildContext().messages.at(-1)).toMatchObject({ stopReason: "aborted" });
      // Never two user turns in a row with nothing between them.
      scripted.script([reply("ok")]);
      expect((await recovering.prompt("next")).status).toBe("completed");
      const sent = scripted.requests.at(-1)?.context.messages.map((m) => m.role) ?? [];
      expect(sent.slice(-3)).toEqual(["user", "assistant", "user"]);
      reopened.close();
      scripted.dispose();
    },
  );

  it("a finished run, or a run whose context ends in an answer, is not closed again", () => {
    const finished = reopen(
      killedAfter((session) => {
        session.appendJournal({ event: "run_end", runId: "r1", status: "completed" });
      }),
    );
    const scripted = scriptedModel();
    expect(harnessOn(finished, scripted).recovery).toBeUndefined();
    finished.close();
    const answered = reopen(
      killedAfter((session, question) => {
        session.appendMessage(reply("answer"));
        session.setLabel(question.id, "asked");
      }),
    );
    expect(harnessOn(answered, scripted).recovery).toMatchObject({
      interruptedRunId: "r1",
      closedTurn: false,
    });
    expect(answered.buildContext().messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
    answered.close();
    scripted.dispose();
  });

  it("tool calls left open behind a config change still get their results", () => {
    const reopened = reopen(
      killedAfter((session) => {
        session.appendMessage(callTools(["echo", { text: "x" }, "c1"]));
        session.append({ type: "model_change", provider: "faux", modelId: "m" });
      }),
    );
    const scripted = scriptedModel();
    const recovering = harnessOn(reopened, scripted, { tools: [echoTool().tool] });
    expect(recovering.recovery?.toolResults).toEqual([
      { toolCallId: "c1", toolName: "echo", started: false, completed: false, idempotent: false },
    ]);
    assertEveryCallAnswered(reopened);
    reopened.close();
    scripted.dispose();
  });
});

describe("durable runs: a fork tells calls that ran from calls that did not", () => {
  /** A store with one session whose run called `echo` (c1) and `echo` (c2, denied), then answered. */
  async function ranSession(options: { crashIn?: "tool" } = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-fork-"));
    dirs.push(dir);
    const store = new SessionStore(dir);
    const session = store.create();
    const scripted = scriptedModel();
    let crash: string | undefined;
    const executions: string[] = [];
    const echo = echoTool({
      execute: async (_args, context) => {
        executions.push(context.toolCallId);
        if (options.crashIn === "tool") crash = fs.readFileSync(session.storage.path as string, "utf8");
        return { content: [{ type: "text", text: "side effect done" }] };
      },
    });
    const harness = harnessOn(session, scripted, { tools: [echo.tool] });
    harness.hooks.toolGate.tap("deny-c2", (call) =>
      call.id === "c2" ? { decision: "deny", reason: "not c2" } : undefined,
    );
    scripted.script([callTools(["echo", { text: "a" }, "c1"], ["echo", { text: "b" }, "c2"]), reply("done")]);
    await harness.prompt("go");
    const callEntry = session
      .branch()
      .find((entry) => entry.type === "message" && entry.message.role === "assistant") as SessionEntry;
    return { store, session, scripted, echo, callEntry, crash, executions };
  }

  it("a fork at a tool-calling message: the call that ran says so, the denied one says not run", async () => {
    const { store, session, scripted, echo, callEntry, executions } = await ranSession();
    expect(executions).toEqual(["c1"]);
    const fork = store.fork(session.id, callEntry.id);
    const recovering = harnessOn(fork, scripted, { tools: [echo.tool] });
    expect(recovering.recovery?.toolResults).toEqual([
      { toolCallId: "c1", toolName: "echo", started: true, completed: true, idempotent: false },
      { toolCallId: "c2", toolName: "echo", started: false, completed: false, idempotent: false },
    ]);
    const results = fork.buildContext().messages.filter((m) => m.role === "toolResult");
    expect(results.map(textOf)).toEqual([INTERRUPTED_UNRECORDED, INTERRUPTED_NOT_RUN]);
    expect(executions).toEqual(["c1"]); // the fork ran nothing
    fork.close();
    session.close();
    scripted.dispose();
  });

  it("a fork of an unrecovered crash mid-tool says the tool may or may not have completed, never not run", async () => {
    const { store, session, scripted, echo, callEntry, crash } = await ranSession({ crashIn: "tool" });
    session.close();
    // The source as the crash left it: the run open, c1 started, no results.
    fs.writeFileSync(session.storage.path as string, crash as string);
    const fork = store.fork(session.id, callEntry.id);
    const forkJournal = fork.journal().map((record) => record.event);
    expect(forkJournal).toEqual(["tool_start", "tool_start"]); // c1 started; c2 may still run in the source
    const recovering = harnessOn(fork, scripted, { tools: [echo.tool] });
    expect(
      recovering.recovery?.toolResults.map((call) => [call.toolCallId, call.started, call.completed]),
    ).toEqual([
      ["c1", true, false],
      ["c2", true, false],
    ]);
    for (const result of fork.buildContext().messages.filter((m) => m.role === "toolResult")) {
      expect(textOf(result)).toBe(INTERRUPTED_UNKNOWN);
    }
    fork.close();
    scripted.dispose();
  });

  it("a fork past the results carries no tool records, and a fork is written as one group", async () => {
    const { store, session, scripted } = await ranSession();
    const fork = store.fork(session.id, session.leafId as string);
    expect(fork.journal()).toEqual([]);
    expect(harnessOn(fork, scripted).recovery).toBeUndefined();
    const lines = fs
      .readFileSync(fork.storage.path as string, "utf8")
      .trim()
      .split("\n")
      .slice(1);
    expect(new Set(lines.map((line) => JSON.parse(line).writeGroup?.id)).size).toBe(1);
    fork.close();
    session.close();
    scripted.dispose();
  });
});
