import { afterEach, describe, expect, it } from "vitest";
import { AgentHarness } from "../src/harness/agent-harness.js";
import { BRANCH_SUMMARY_PREFIX } from "../src/session/context.js";
import type { Session } from "../src/session/session.js";
import { SessionStore } from "../src/session/session-store.js";
import {
  isSummaryRequest,
  removeTempDirs,
  summaryPromptText,
  summaryReply,
  tempDir,
  textOf,
} from "./support/compaction.js";
import { echoTool, fixture, gate } from "./support/harness-fixture.js";
import { reply, scriptedModel } from "./support/scripted-model.js";

afterEach(removeTempDirs);

/** A JSONL-backed harness: question 1, answer 1, question 2, answer 2. Returns the first answer's id. */
async function twoExchanges() {
  const dir = tempDir();
  const store = new SessionStore(dir);
  const scripted = scriptedModel();
  const session = store.create();
  const echo = echoTool();
  const harness = new AgentHarness({
    session,
    model: scripted.model,
    models: scripted.collection,
    tools: [echo.tool],
  });
  const events: { type: string }[] = [];
  harness.subscribe((event) => {
    events.push(event);
  });
  scripted.script([reply("answer one"), reply("answer two")]);
  await harness.prompt("question one");
  const firstAnswer = session.leafId as string;
  await harness.prompt("question two about the other idea");
  return { store, scripted, session, harness, events, firstAnswer };
}

const texts = (session: Session) => session.buildContext().messages.map(textOf);

describe("harness.navigateTree()", () => {
  it("moves the leaf without a summary, and the next prompt continues from the target", async () => {
    const t = await twoExchanges();
    const outcome = await t.harness.navigateTree(t.firstAnswer);
    expect(outcome).toEqual({ status: "done" });
    expect(t.session.leafId).toBe(t.firstAnswer);
    expect(texts(t.session)).toEqual(["question one", "answer one"]);
    expect(t.session.branch().some((entry) => entry.type === "branch_summary")).toBe(false);
    expect(t.events.slice(-3)).toEqual([
      { type: "branch_start", targetId: t.firstAnswer, fromId: expect.any(String) },
      { type: "branch_end", targetId: t.firstAnswer, status: "done" },
      { type: "settled" },
    ]);

    t.scripted.script([reply("answer three")]);
    await t.harness.prompt("question three");
    expect(t.scripted.requests.at(-1)?.context.messages.map((m) => textOf(m as never))).toEqual([
      "question one",
      "answer one",
      "question three",
    ]);

    const leaf = t.session.leafId;
    t.session.close();
    const reopened = t.store.open(t.session.id);
    expect(reopened.leafId).toBe(leaf);
    expect(texts(reopened)).toEqual(["question one", "answer one", "question three", "answer three"]);
    reopened.close();
  });

  it("with summarize: true the model summarises the abandoned branch into a branch_summary entry", async () => {
    const t = await twoExchanges();
    t.scripted.script([summaryReply("BRANCH-SUMMARY")]);
    const outcome = await t.harness.navigateTree(t.firstAnswer, { summarize: true });
    expect(outcome).toMatchObject({ status: "done", summaryEntryId: expect.any(String) });

    const request = t.scripted.requests.at(-1);
    expect(request && isSummaryRequest(request)).toBe(true);
    const prompt = summaryPromptText(request as never);
    expect(prompt).toContain("question two about the other idea");
    expect(prompt).not.toContain("question one"); // shared with the target: not abandoned

    const summary = t.session.getEntry(outcome.summaryEntryId as string);
    expect(summary).toMatchObject({ type: "branch_summary", parentId: t.firstAnswer });
    expect(t.session.leafId).toBe(outcome.summaryEntryId);
    const context = texts(t.session);
    expect(context.slice(0, 2)).toEqual(["question one", "answer one"]);
    expect(context[2]).toContain(BRANCH_SUMMARY_PREFIX);
    expect(context[2]).toContain("BRANCH-SUMMARY");
    expect(t.events.at(-2)).toMatchObject({ type: "branch_end", status: "done", by: "model" });

    t.session.close();
    const reopened = t.store.open(t.session.id);
    expect(reopened.leafId).toBe(outcome.summaryEntryId);
    expect(texts(reopened)).toEqual(context);
    reopened.close();
  });

  it("a caller-supplied summary is recorded without asking the model", async () => {
    const t = await twoExchanges();
    const requests = t.scripted.requests.length;
    const outcome = await t.harness.navigateTree(t.firstAnswer, { summary: "tried the other idea" });
    expect(t.scripted.requests).toHaveLength(requests);
    expect(t.session.getEntry(outcome.summaryEntryId as string)).toMatchObject({
      summary: "tried the other idea",
    });
    t.session.close();
  });

  it("beforeBranch sees the abandoned messages and may supply the summary", async () => {
    const t = await twoExchanges();
    const seen: unknown[] = [];
    t.harness.hooks.beforeBranch.tapPromise("writer", async (request) => {
      seen.push({ summarize: request.summarize, messages: request.messages?.map(textOf) });
      return { summary: "from the plugin" };
    });
    const requests = t.scripted.requests.length;
    const outcome = await t.harness.navigateTree(t.firstAnswer, { summarize: true });
    expect(seen).toEqual([
      { summarize: true, messages: ["question two about the other idea", "answer two"] },
    ]);
    expect(t.scripted.requests).toHaveLength(requests);
    expect(t.session.getEntry(outcome.summaryEntryId as string)).toMatchObject({
      summary: "from the plugin",
    });
    expect(t.events.at(-2)).toMatchObject({ type: "branch_end", by: "writer" });
    t.session.close();
  });

  it("beforeBranch can cancel: the leaf stays and nothing is written", async () => {
    const t = await twoExchanges();
    t.harness.hooks.beforeBranch.tapPromise("keeper", async () => ({ cancel: { reason: "stay" } }));
    const before = t.session.entries().length;
    const leaf = t.session.leafId;
    const outcome = await t.harness.navigateTree(t.firstAnswer, { summarize: true });
    expect(outcome).toEqual({ status: "cancelled", reason: "stay (by keeper)" });
    expect(t.session.leafId).toBe(leaf);
    expect(t.session.entries()).toHaveLength(before);
    t.session.close();
  });

  it("a throwing beforeBranch tap rejects with a hook error and the leaf stays", async () => {
    const t = await twoExchanges();
    t.harness.hooks.beforeBranch.tapPromise("broken", async () => {
      throw new Error("nope");
    });
    const leaf = t.session.leafId;
    await expect(t.harness.navigateTree(t.firstAnswer)).rejects.toMatchObject({
      code: "hook",
      plugin: "broken",
      hook: "beforeBranch",
    });
    expect(t.session.leafId).toBe(leaf);
    expect(t.harness.phase).toBe("idle");
    t.session.close();
  });

  it("abort() during the branch summary rejects with code aborted and the leaf stays", async () => {
    const t = await twoExchanges();
    const started = gate();
    const release = gate();
    t.scripted.script([
      async () => {
        started.open();
        await release.opened;
        return summaryReply("too late");
      },
    ]);
    const leaf = t.session.leafId;
    const before = t.session.entries().length;
    const navigation = t.harness.navigateTree(t.firstAnswer, { summarize: true });
    expect(t.harness.phase).toBe("branch");
    await started.opened;
    t.harness.abort();
    release.open();
    await expect(navigation).rejects.toMatchObject({ code: "aborted" });
    expect(t.session.leafId).toBe(leaf);
    expect(t.session.entries()).toHaveLength(before);
    expect(t.events.at(-2)).toMatchObject({ type: "branch_end", status: "aborted" });
    t.session.close();
  });

  it("an unknown target rejects with invalid_argument before anything happens", async () => {
    const f = fixture();
    await expect(f.harness.navigateTree("nope")).rejects.toMatchObject({ code: "invalid_argument" });
    expect(f.types()).toEqual([]);
    expect(f.harness.phase).toBe("idle");
  });
});

describe("labels through the harness", () => {
  it("label() writes at once when idle and survives a reopen; null removes it", async () => {
    const t = await twoExchanges();
    t.harness.label(t.firstAnswer, "good answer");
    expect(t.session.labelOf(t.firstAnswer)).toBe("good answer");
    const other = t.session.leafId as string;
    t.harness.label(other, "tmp");
    t.harness.label(other, null);
    t.session.close();
    const reopened = t.store.open(t.session.id);
    expect(reopened.labelOf(t.firstAnswer)).toBe("good answer");
    expect(reopened.labelOf(other)).toBeUndefined();
    reopened.close();
  });

  it("label() while busy is a pending write committed at the save point after the turn's messages", async () => {
    const f = fixture();
    let target = "";
    f.scripted.script([
      reply("first"),
      () => {
        f.harness.label(target, "mid-run");
        return reply("second");
      },
    ]);
    await f.harness.prompt("one");
    target = f.session.leafId as string;
    await f.harness.prompt("two");
    expect(f.session.labelOf(target)).toBe("mid-run");
    expect(f.entryTypes().slice(-3)).toEqual(["user", "assistant", "label"]);
  });

  it("label() rejects unknown entries", () => {
    const f = fixture();
    expect(() => f.harness.label("missing", "x")).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });
});

describe("harness.fork()", () => {
  it("copies the branch up to an entry into a new session file that reopens and continues", async () => {
    const t = await twoExchanges();
    const forked = t.harness.fork(t.firstAnswer, t.store);
    expect(forked.id).not.toBe(t.session.id);
    expect(forked.header.forkedFrom).toEqual({ sessionId: t.session.id, entryId: t.firstAnswer });
    expect(texts(forked)).toEqual(["question one", "answer one"]);
    expect(texts(t.session)).toContain("question two about the other idea"); // source unchanged
    forked.close();

    const reopened = t.store.open(forked.id);
    expect(reopened.leafId).toBe(t.firstAnswer);
    const next = new AgentHarness({
      session: reopened,
      model: t.scripted.model,
      models: t.scripted.collection,
    });
    t.scripted.script([reply("forked answer")]);
    await next.prompt("forked question");
    expect(t.scripted.requests.at(-1)?.context.messages.map((m) => textOf(m as never))).toEqual([
      "question one",
      "answer one",
      "forked question",
    ]);
    reopened.close();
    t.session.close();
  });

  it("fork() is refused while a run is in progress", async () => {
    const t = await twoExchanges();
    const release = gate();
    t.scripted.script([
      async () => {
        await release.opened;
        return reply("late");
      },
    ]);
    const run = t.harness.prompt("three");
    expect(() => t.harness.fork(t.firstAnswer, t.store)).toThrow(expect.objectContaining({ code: "busy" }));
    release.open();
    await run;
    t.session.close();
  });
});
