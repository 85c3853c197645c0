/**
 * Durable approvals: an `ask` nobody answers parks the run (`onUnanswered: "park"`),
 * a person answers later from another process, and `resume()` runs exactly the
 * approved call - or ends a denied one with the person's reason - and goes on.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { HarnessEvent, RunOutcome } from "../src/events/event-types.js";
import { AgentHarness, type AgentHarnessOptions } from "../src/harness/agent-harness.js";
import { INTERRUPTED_UNKNOWN } from "../src/harness/recovery.js";
import { approvalsOf, callHash, openParks, resolveApproval } from "../src/session/approvals.js";
import type { RecordedToolResult } from "../src/session/entries.js";
import { JsonlStorage } from "../src/session/jsonl-storage.js";
import { Session } from "../src/session/session.js";
import { createSessionHeader } from "../src/session/storage.js";
import { echoTool } from "./support/harness-fixture.js";
import { callTools, reply, scriptedModel } from "./support/scripted-model.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function sessionFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-approvals-"));
  dirs.push(dir);
  const file = path.join(dir, "session.jsonl");
  Session.create(JsonlStorage.create(file, createSessionHeader({ cwd: dir }))).close();
  return file;
}

const open = (file: string) => Session.open(JsonlStorage.open(file));

/** A process's view: a harness on the session file with an echo tool and a gate asking about "risky" texts. */
function processOn(file: string, options: Partial<AgentHarnessOptions> = {}) {
  const session = open(file);
  const scripted = scriptedModel();
  const echo = echoTool();
  const harness = new AgentHarness({
    session,
    model: scripted.model,
    models: scripted.collection,
    tools: [echo.tool],
    onUnanswered: "park",
    ...options,
  });
  let gateCalls = 0;
  harness.hooks.toolGate.tap("house-rules", (call) => {
    gateCalls++;
    return String((call.args as { text: string }).text).startsWith("risky")
      ? { decision: "ask", reason: "risky text needs a person", rule: "risky" }
      : { decision: "allow", reason: "harmless" };
  });
  const events: HarnessEvent[] = [];
  harness.subscribe((event) => {
    events.push(event);
  });
  return {
    session,
    scripted,
    harness,
    calls: echo.calls,
    events,
    gateCalls: () => gateCalls,
    close() {
      session.close();
      scripted.dispose();
    },
  };
}

const resultOf = (session: Session, toolCallId: string) =>
  session
    .branch()
    .flatMap((entry) =>
      entry.type === "message" &&
      entry.message.role === "toolResult" &&
      entry.message.toolCallId === toolCallId
        ? [entry.message as RecordedToolResult]
        : [],
    );

const textOf = (result: RecordedToolResult | undefined) =>
  result?.content.map((block) => (block.type === "text" ? block.text : "")).join("");

/** Parks a run on call `c1` (risky) in a first process and closes it. */
async function parkedSession(file = sessionFile()) {
  const first = processOn(file);
  first.scripted.script([callTools(["echo", { text: "risky rm" }, "c1"])]);
  const outcome = await first.harness.prompt("do the risky thing");
  first.close();
  return { file, outcome, first };
}

describe("parking a run on an unanswered ask", () => {
  it("records the call and its verdict in the journal and ends the run parked, without running the tool", async () => {
    const { file, outcome, first } = await parkedSession();
    expect(outcome.status).toBe("parked");
    expect(outcome.parked).toHaveLength(1);
    const parked = outcome.parked?.[0];
    expect(parked).toMatchObject({
      toolCallId: "c1",
      toolName: "echo",
      args: { text: "risky rm" },
      askedBy: "house-rules:risky",
      reason: "risky text needs a person",
      argsHash: callHash("echo", { text: "risky rm" }),
    });
    expect(first.calls).toHaveLength(0);
    expect(first.events.find((e) => e.type === "tool_parked")).toMatchObject({
      approvalId: parked?.approvalId,
    });
    expect(first.events.find((e) => e.type === "agent_end")).toMatchObject({ status: "parked" });
    const session = open(file);
    expect(session.journal().at(-1)).toMatchObject({ event: "run_end", status: "parked" });
    expect(resultOf(session, "c1")).toEqual([]);
    expect(approvalsOf(session)).toMatchObject([
      { approvalId: parked?.approvalId, status: "pending", done: false },
    ]);
    session.close();
  });

  it("without onUnanswered: park an unanswered ask is still denied (the default)", async () => {
    const file = sessionFile();
    const proc = processOn(file, { onUnanswered: "deny" });
    proc.scripted.script([callTools(["echo", { text: "risky" }, "c1"]), reply("ok")]);
    const outcome = await proc.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(resultOf(proc.session, "c1")[0]?.decision).toMatchObject({ decision: "deny", unanswered: true });
    proc.close();
  });

  it("a new prompt on a parked session is refused (code parked), and so is a resume while the approval is pending", async () => {
    const { file } = await parkedSession();
    const second = processOn(file);
    await expect(second.harness.prompt("something else")).rejects.toMatchObject({ code: "parked" });
    await expect(second.harness.resume()).rejects.toMatchObject({ code: "parked" });
    expect(second.harness.phase).toBe("idle");
    second.close();
  });

  it("reopening a parked session leaves the parked call open (recovery synthesizes nothing)", async () => {
    const { file } = await parkedSession();
    const again = processOn(file);
    expect(again.harness.recovery).toBeUndefined();
    expect(resultOf(again.session, "c1")).toEqual([]);
    again.close();
  });

  it("resume with nothing parked is an invalid_argument", async () => {
    const proc = processOn(sessionFile());
    await expect(proc.harness.resume()).rejects.toMatchObject({ code: "invalid_argument" });
    proc.close();
  });
});

describe("answering from another process and resuming", () => {
  it("an approved call runs once with exactly the parked arguments, then the run continues and completes", async () => {
    const { file, outcome } = await parkedSession();
    const id = outcome.parked?.[0]?.approvalId as string;
    // A second process (the approver) writes the answer.
    const approver = open(file);
    const approval = resolveApproval(approver, id, { decision: "allow", by: "person:alice", reason: "fine" });
    expect(approval.status).toBe("approved");
    approver.close();
    // A third process resumes.
    const third = processOn(file);
    third.scripted.script([reply("done after approval")]);
    const resumed = await third.harness.resume();
    expect(resumed.status).toBe("completed");
    expect(third.calls).toEqual([{ args: { text: "risky rm" }, toolCallId: "c1" }]);
    expect(third.gateCalls()).toBe(0); // the person's verdict stands; the gate is not asked again
    const [result] = resultOf(third.session, "c1");
    expect(textOf(result)).toBe("echo: risky rm");
    expect(result?.decision).toEqual({
      decision: "allow",
      by: "person:alice",
      reason: "fine",
      askedBy: "house-rules:risky",
      approvalId: id,
    });
    expect(third.session.buildContext().messages.at(-1)).toMatchObject({ role: "assistant" });
    expect(approvalsOf(third.session)[0]).toMatchObject({ status: "approved", done: true });
    // The approval is spent: nothing is parked any more and a new prompt works.
    third.scripted.append([reply("next")]);
    await expect(third.harness.prompt("next")).resolves.toMatchObject({ status: "completed" });
    expect(third.calls).toHaveLength(1);
    third.close();
  });

  it("a denied call ends with the person's reason as its result; the tool never runs and the run goes on", async () => {
    const { file, outcome } = await parkedSession();
    const id = outcome.parked?.[0]?.approvalId as string;
    const approver = open(file);
    resolveApproval(approver, id, { decision: "deny", by: "person:bob", reason: "not on prod" });
    approver.close();
    const third = processOn(file);
    third.scripted.script([reply("understood")]);
    const resumed = await third.harness.resume();
    expect(resumed.status).toBe("completed");
    expect(third.calls).toHaveLength(0);
    const [result] = resultOf(third.session, "c1");
    expect(result?.isError).toBe(true);
    expect(textOf(result)).toContain("not on prod");
    expect(result?.decision).toMatchObject({ decision: "deny", by: "person:bob", reason: "not on prod" });
    third.close();
  });

  it("an answer for other arguments is refused (approval_mismatch) and nothing is recorded", async () => {
    const { file, outcome } = await parkedSession();
    const id = outcome.parked?.[0]?.approvalId as string;
    const approver = open(file);
    const before = approver.journal().length;
    expect(() =>
      resolveApproval(approver, id, {
        decision: "allow",
        by: "person:alice",
        argsHash: callHash("echo", { text: "risky rm -rf /" }),
      }),
    ).toThrow(expect.objectContaining({ code: "approval_mismatch" }));
    expect(approver.journal()).toHaveLength(before);
    // The hash the person saw is accepted.
    resolveApproval(approver, id, {
      decision: "allow",
      by: "person:alice",
      argsHash: callHash("echo", { text: "risky rm" }),
    });
    // A second answer, or an unknown id, is refused.
    expect(() => resolveApproval(approver, id, { decision: "deny", by: "person:eve" })).toThrow(
      expect.objectContaining({ code: "approval" }),
    );
    expect(() => resolveApproval(approver, "nope", { decision: "allow", by: "person:eve" })).toThrow(
      expect.objectContaining({ code: "approval" }),
    );
    approver.close();
  });

  it("a recorded approval whose hash does not match the parked arguments never runs the call", async () => {
    const { file, outcome } = await parkedSession();
    const parked = outcome.parked?.[0];
    const forger = open(file);
    // What tampering with the store would leave: an answer bound to other arguments.
    forger.appendJournal({
      event: "tool_approval",
      approvalId: parked?.approvalId as string,
      toolCallId: "c1",
      decision: "allow",
      by: "person:mallory",
      reason: "looks fine",
      argsHash: callHash("echo", { text: "something harmless" }),
    });
    forger.close();
    const third = processOn(file);
    third.scripted.script([reply("ok")]);
    await third.harness.resume();
    expect(third.calls).toHaveLength(0);
    const [result] = resultOf(third.session, "c1");
    expect(result?.decision).toMatchObject({ decision: "deny", by: "harness" });
    expect(textOf(result)).toContain("does not match");
    third.close();
  });

  it("toolCall rewrites happen once, before the park: the parked (rewritten) arguments are what runs", async () => {
    const file = sessionFile();
    const first = processOn(file);
    let rewrites = 0;
    first.harness.hooks.toolCall.tap("normaliser", (call) => {
      rewrites++;
      return { ...call, args: { text: `${(call.args as { text: string }).text} --dry-run` } };
    });
    first.scripted.script([callTools(["echo", { text: "risky deploy" }, "c1"])]);
    const outcome = await first.harness.prompt("deploy");
    expect(outcome.parked?.[0]?.args).toEqual({ text: "risky deploy --dry-run" });
    first.close();
    const approver = open(file);
    resolveApproval(approver, outcome.parked?.[0]?.approvalId as string, {
      decision: "allow",
      by: "person:alice",
    });
    approver.close();
    const third = processOn(file);
    let resumedRewrites = 0;
    third.harness.hooks.toolCall.tap("normaliser", (call) => {
      resumedRewrites++;
      return { ...call, args: { text: "changed at resume" } };
    });
    third.scripted.script([reply("deployed")]);
    await third.harness.resume();
    expect(rewrites).toBe(1);
    expect(resumedRewrites).toBe(0);
    expect(third.calls.map((c) => c.args)).toEqual([{ text: "risky deploy --dry-run" }]);
    third.close();
  });

  it("in a message with several calls, the ones before the park run once, the parked and later ones at resume", async () => {
    const file = sessionFile();
    const first = processOn(file);
    first.scripted.script([
      callTools(
        ["echo", { text: "a" }, "c1"],
        ["echo", { text: "risky b" }, "c2"],
        ["echo", { text: "c" }, "c3"],
      ),
    ]);
    const outcome: RunOutcome = await first.harness.prompt("three");
    expect(outcome.status).toBe("parked");
    expect(first.calls.map((c) => c.toolCallId)).toEqual(["c1"]);
    first.close();
    const approver = open(file);
    resolveApproval(approver, outcome.parked?.[0]?.approvalId as string, {
      decision: "allow",
      by: "person:alice",
    });
    approver.close();
    const third = processOn(file);
    third.scripted.script([reply("all three")]);
    expect((await third.harness.resume()).status).toBe("completed");
    expect(third.calls.map((c) => c.toolCallId)).toEqual(["c2", "c3"]);
    expect(third.gateCalls()).toBe(1); // c3 was never decided before: its gate runs now
    for (const id of ["c1", "c2", "c3"]) expect(resultOf(third.session, id)).toHaveLength(1);
    third.close();
  });

  it("a resume that crashed while the approved call ran is recovered as 'may or may not have completed', never run again", async () => {
    const { file, outcome } = await parkedSession();
    const approver = open(file);
    resolveApproval(approver, outcome.parked?.[0]?.approvalId as string, {
      decision: "allow",
      by: "person:alice",
    });
    // What a SIGKILL during the resumed call leaves: run_start and tool_start, nothing after.
    approver.appendJournal({ event: "run_start", runId: "r2" });
    approver.appendJournal({ event: "tool_start", runId: "r2", toolCallId: "c1", toolName: "echo" });
    approver.close();
    const after = processOn(file);
    expect(after.harness.recovery?.toolResults).toMatchObject([{ toolCallId: "c1", started: true }]);
    expect(textOf(resultOf(after.session, "c1")[0])).toBe(INTERRUPTED_UNKNOWN);
    await expect(after.harness.resume()).rejects.toMatchObject({ code: "invalid_argument" });
    expect(after.calls).toHaveLength(0);
    after.close();
  });
});

describe("the call hash", () => {
  it("binds tool name and canonical arguments: key order never matters, any value change does", () => {
    const a = callHash("write", { path: "a.txt", opts: { mode: 1, force: true } });
    expect(callHash("write", { opts: { force: true, mode: 1 }, path: "a.txt" })).toBe(a);
    expect(callHash("write", { path: "a.txt", opts: { mode: 2, force: true } })).not.toBe(a);
    expect(callHash("read", { path: "a.txt", opts: { mode: 1, force: true } })).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("finding open parks costs nothing in a session that never parked", () => {
  it("journalCount counts park records as appended and as reopened; openParks finds them only then", async () => {
    const fresh = open(sessionFile());
    fresh.appendJournal({ event: "run_start", runId: "r1" });
    expect(fresh.journalCount("tool_park")).toBe(0);
    expect(openParks(fresh)).toEqual([]);
    fresh.close();

    const { file, outcome } = await parkedSession();
    const reopened = open(file);
    expect(reopened.journalCount("tool_park")).toBe(1);
    expect(reopened.journalCount("run_start")).toBeGreaterThan(0);
    expect(openParks(reopened).map(({ park }) => park.approvalId)).toEqual([outcome.parked?.[0]?.approvalId]);
    reopened.close();
  });
});
