import { afterEach, describe, expect, it } from "vitest";
import { AgentHarness } from "../src/harness/agent-harness.js";
import { COMPACTION_SUMMARY_PREFIX } from "../src/session/context.js";
import type { CompactionEntry } from "../src/session/entries.js";
import { SessionStore } from "../src/session/session-store.js";
import {
  isSummaryRequest,
  providerError,
  readTool,
  removeTempDirs,
  summaryPromptText,
  summaryReply,
  tempDir,
  textOf,
} from "./support/compaction.js";
import { fixture, gate } from "./support/harness-fixture.js";
import { callTools, reply, scriptedModel } from "./support/scripted-model.js";

afterEach(removeTempDirs);

/** Three runs: read a.ts, read b.ts, then a plain question; ~every message a few dozen tokens. */
async function seed(f: ReturnType<typeof fixture>) {
  f.scripted.script([
    callTools(["read", { path: "a.ts" }, "call-a"]),
    reply("a.ts is fine"),
    callTools(["read", { path: "b.ts" }, "call-b"]),
    reply("b.ts is fine"),
    reply("third answer"),
  ]);
  await f.harness.prompt(`first question ${"q".repeat(200)}`);
  await f.harness.prompt(`second question ${"q".repeat(200)}`);
  await f.harness.prompt("third question");
}

// 16 tokens keep exactly the last question and its answer (8 + 7 estimated tokens).
const compactionFixture = (keepRecentTokens = 16) =>
  fixture({ tools: [readTool(200)], compaction: { keepRecentTokens }, retry: { baseDelayMs: 0 } });

const compactionEntries = (f: ReturnType<typeof fixture>) =>
  f.session.branch().filter((entry): entry is CompactionEntry => entry.type === "compaction");

describe("harness.compact()", () => {
  it("summarises the older part with the model and keeps the recent tail verbatim", async () => {
    const f = compactionFixture();
    await seed(f);
    f.scripted.append([summaryReply("SUMMARY-1")]);
    const outcome = await f.harness.compact();
    expect(outcome).toMatchObject({ status: "done", by: "model" });

    const request = f.scripted.requests.at(-1);
    expect(request && isSummaryRequest(request)).toBe(true);
    const prompt = summaryPromptText(request as never);
    expect(prompt).toContain("first question");
    expect(prompt).not.toContain("third question"); // kept verbatim, not summarised
    for (const section of ["## Goal", "## Progress", "## Decisions", "## Files touched", "## Next steps"]) {
      expect(prompt).toContain(section);
    }

    const messages = f.messages();
    expect(textOf(messages[0])).toContain(COMPACTION_SUMMARY_PREFIX);
    expect(textOf(messages[0])).toContain("SUMMARY-1");
    expect(messages.slice(1).map(textOf)).toEqual(["third question", "third answer"]);
    const [entry] = compactionEntries(f);
    expect(entry).toMatchObject({ summary: expect.stringContaining("SUMMARY-1") });
    expect(entry?.details).toEqual({ filesTouched: ["a.ts", "b.ts"] });
    expect(f.types().filter((t) => t.startsWith("compaction"))).toEqual([
      "compaction_start",
      "compaction_end",
    ]);
    expect(f.events.at(-2)).toMatchObject({
      type: "compaction_end",
      reason: "manual",
      status: "done",
      entryId: entry?.id,
    });
    expect(f.events.at(-1)).toEqual({ type: "settled" });
  });

  it("the next request sends the summary and the kept tail, nothing older", async () => {
    const f = compactionFixture();
    await seed(f);
    f.scripted.append([summaryReply("SUMMARY-1"), reply("fourth answer")]);
    await f.harness.compact();
    await f.harness.prompt("fourth question");
    const sent = f.scripted.requests.at(-1)?.context.messages.map((m) => textOf(m as never)) ?? [];
    expect(sent[0]).toContain("SUMMARY-1");
    expect(sent.slice(1)).toEqual(["third question", "third answer", "fourth question"]);
  });

  it("carries the previous summary forward into the next compaction", async () => {
    const f = compactionFixture();
    await seed(f);
    f.scripted.append([summaryReply("SUMMARY-1")]);
    await f.harness.compact();
    f.scripted.append([
      callTools(["read", { path: "c.ts" }, "call-c"]),
      reply("c.ts is fine"),
      reply("fifth answer"),
    ]);
    await f.harness.prompt(`fourth question ${"q".repeat(200)}`);
    await f.harness.prompt("fifth question");
    f.scripted.append([summaryReply("SUMMARY-2")]);
    const second = await f.harness.compact();
    expect(second.status).toBe("done");

    const prompt = summaryPromptText(f.scripted.requests.at(-1) as never);
    expect(prompt).toMatch(/<previous-summary>\n[\s\S]*SUMMARY-1[\s\S]*<\/previous-summary>/);
    expect(prompt).toContain("fourth question");
    expect(prompt).not.toContain("first question"); // already in the previous summary

    const messages = f.messages();
    expect(textOf(messages[0])).toContain("SUMMARY-2");
    expect(messages.map(textOf).join("\n")).not.toContain("SUMMARY-1");
    expect(messages.slice(1).map(textOf)).toEqual(["fifth question", "fifth answer"]);
    expect(compactionEntries(f).at(-1)?.details).toEqual({ filesTouched: ["a.ts", "b.ts", "c.ts"] });
  });

  it("beforeCompact can cancel with a reason: nothing is written and the model is not asked", async () => {
    const f = compactionFixture();
    await seed(f);
    const seen: unknown[] = [];
    f.harness.hooks.beforeCompact.tapPromise("keeper", async (request) => {
      seen.push({ trigger: request.trigger, messages: request.messages?.length });
      return { cancel: { reason: "keep everything" } };
    });
    const before = f.session.entries().length;
    const requests = f.scripted.requests.length;
    const outcome = await f.harness.compact();
    expect(outcome).toEqual({ status: "cancelled", reason: "keep everything", by: "keeper" });
    expect(seen).toEqual([{ trigger: "manual", messages: 8 }]);
    expect(f.session.entries()).toHaveLength(before);
    expect(f.scripted.requests).toHaveLength(requests);
    expect(f.events.at(-2)).toMatchObject({ type: "compaction_end", status: "cancelled", by: "keeper" });
  });

  it("beforeCompact can supply the summary: it is recorded and the model is not asked", async () => {
    const f = compactionFixture();
    await seed(f);
    f.harness.hooks.beforeCompact.tapPromise("writer", async (request) => ({
      summary: `hand-written, ${request.messages?.length} messages`,
    }));
    const requests = f.scripted.requests.length;
    const outcome = await f.harness.compact();
    expect(outcome).toMatchObject({ status: "done", by: "writer" });
    expect(f.scripted.requests).toHaveLength(requests);
    expect(compactionEntries(f)[0]?.summary).toBe("hand-written, 8 messages");
  });

  it("a throwing beforeCompact tap fails the operation with a hook error naming plugin and hook", async () => {
    const f = compactionFixture();
    await seed(f);
    f.harness.hooks.beforeCompact.tapPromise("broken", async () => {
      throw new Error("nope");
    });
    const before = f.session.entries().length;
    await expect(f.harness.compact()).rejects.toMatchObject({
      code: "hook",
      plugin: "broken",
      hook: "beforeCompact",
    });
    expect(f.session.entries()).toHaveLength(before);
    expect(f.harness.phase).toBe("idle");
    expect(f.events.at(-2)).toMatchObject({ type: "compaction_end", status: "failed" });
  });

  it("a failing summary request rejects with code compaction and writes nothing", async () => {
    const f = fixture({
      tools: [readTool(200)],
      compaction: { keepRecentTokens: 30 },
      retry: { enabled: false },
    });
    await seed(f);
    f.scripted.append([providerError("invalid api key")]);
    const before = f.session.entries().length;
    await expect(f.harness.compact()).rejects.toMatchObject({ code: "compaction" });
    expect(f.session.entries()).toHaveLength(before);
  });

  it("retries a transient error while writing the summary, announcing it as a summary retry", async () => {
    const f = compactionFixture();
    await seed(f);
    f.scripted.append([providerError("529 overloaded"), summaryReply("SUMMARY-R")]);
    const outcome = await f.harness.compact();
    expect(outcome.status).toBe("done");
    expect(f.events.filter((e) => e.type === "retry")).toEqual([
      {
        type: "retry",
        operation: "summary",
        attempt: 2,
        maxAttempts: 4,
        delayMs: 0,
        errorMessage: "529 overloaded",
      },
    ]);
    expect(compactionEntries(f)[0]?.summary).toContain("SUMMARY-R");
  });

  it("skips when everything is within the kept tail", async () => {
    const f = fixture({ compaction: { keepRecentTokens: 100_000 } });
    f.scripted.script([reply("hi")]);
    await f.harness.prompt("hello");
    const outcome = await f.harness.compact();
    expect(outcome.status).toBe("skipped");
    expect(compactionEntries(f)).toHaveLength(0);
    expect(f.events.at(-2)).toMatchObject({ type: "compaction_end", status: "skipped" });
  });

  it("takes the compaction phase synchronously: prompt and navigateTree are busy meanwhile", async () => {
    const f = compactionFixture();
    await seed(f);
    const release = gate();
    f.scripted.append([
      async () => {
        await release.opened;
        return summaryReply("late");
      },
    ]);
    const compaction = f.harness.compact();
    expect(f.harness.phase).toBe("compaction");
    await expect(f.harness.prompt("now")).rejects.toMatchObject({ code: "busy" });
    await expect(f.harness.compact()).rejects.toMatchObject({ code: "busy" });
    await expect(f.harness.navigateTree(null)).rejects.toMatchObject({ code: "busy" });
    const idle = f.harness.waitForIdle();
    release.open();
    await compaction;
    await idle;
    expect(f.harness.phase).toBe("idle");
  });

  it("a prompt while a run is in progress makes compact() busy", async () => {
    const f = compactionFixture();
    const release = gate();
    f.scripted.script([
      async () => {
        await release.opened;
        return reply("ok");
      },
    ]);
    const run = f.harness.prompt("go");
    await expect(f.harness.compact()).rejects.toMatchObject({ code: "busy" });
    release.open();
    await run;
  });

  it("abort() during the summary rejects with code aborted, writes nothing, and settles", async () => {
    const f = compactionFixture();
    await seed(f);
    const started = gate();
    const release = gate();
    f.scripted.append([
      async () => {
        started.open();
        await release.opened;
        return summaryReply("too late");
      },
    ]);
    const before = f.session.entries().length;
    const compaction = f.harness.compact();
    await started.opened;
    f.harness.abort("user pressed escape");
    release.open();
    await expect(compaction).rejects.toMatchObject({ code: "aborted" });
    await f.harness.waitForIdle();
    expect(f.session.entries()).toHaveLength(before);
    expect(f.types()).toContain("abort");
    expect(f.events.at(-2)).toMatchObject({ type: "compaction_end", status: "aborted" });
    expect(f.harness.phase).toBe("idle");
  });

  it("writes made by a beforeCompact tap are pending until the compaction settles, then follow it", async () => {
    const f = compactionFixture();
    await seed(f);
    f.harness.hooks.beforeCompact.tapPromise("noter", async (_request, context) => {
      context.session.append({ type: "custom", customType: "note", data: "compacting" });
      expect(f.harness.pendingWrites).toHaveLength(1);
      return { summary: "s" };
    });
    await f.harness.compact();
    expect(f.harness.pendingWrites).toHaveLength(0);
    expect(
      f.session
        .branch()
        .slice(-2)
        .map((entry) => entry.type),
    ).toEqual(["compaction", "custom"]);
  });

  it("a compacted JSONL session reopens to the same context", async () => {
    const dir = tempDir();
    const store = new SessionStore(dir);
    const scripted = scriptedModel();
    const session = store.create();
    const harness = new AgentHarness({
      session,
      model: scripted.model,
      models: scripted.collection,
      tools: [readTool(200)],
      compaction: { keepRecentTokens: 30 },
    });
    scripted.script([
      callTools(["read", { path: "a.ts" }]),
      reply("a.ts is fine"),
      reply("second answer"),
      summaryReply("SUMMARY-1"),
    ]);
    await harness.prompt(`first question ${"q".repeat(200)}`);
    await harness.prompt("second question");
    await harness.compact();
    const context = session.buildContext();
    session.close();

    const reopened = store.open(session.id);
    expect(reopened.buildContext()).toEqual(context);
    expect(textOf(reopened.buildContext().messages[0])).toContain("SUMMARY-1");
    reopened.close();
  });
});
