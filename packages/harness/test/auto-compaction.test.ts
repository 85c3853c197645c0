import type { FauxResponseFactory } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { AgentHarness, type AgentHarnessOptions } from "../src/harness/agent-harness.js";
import { SessionStore } from "../src/session/session-store.js";
import {
  fauxPromptTokens,
  isSummaryRequest,
  providerError,
  removeTempDirs,
  summaryPromptText,
  summaryReply,
  tempDir,
  textOf,
} from "./support/compaction.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply, requestContext, scriptedModel } from "./support/scripted-model.js";

afterEach(removeTempDirs);

const WINDOW = 4_000;
const OVERFLOW = "prompt is too long: 5123 tokens > 4000 maximum";

/**
 * A harness on a model with a 4 000-token window. `cacheRetention: "none"`: the
 * faux provider would otherwise report cache writes on top of input, counting the
 * new part of each prompt twice.
 */
function smallWindow(options: Partial<AgentHarnessOptions> = {}) {
  return fixture(
    {
      requestOptions: { cacheRetention: "none" },
      retry: { baseDelayMs: 0 },
      ...options,
      compaction: { reserveTokens: 1_000, keepRecentTokens: 300, ...options.compaction },
    },
    { models: [{ id: "small", contextWindow: WINDOW }] },
  );
}

const mainRequests = (f: ReturnType<typeof fixture>) =>
  f.scripted.requests.filter((r) => !isSummaryRequest(r));
const summaryRequests = (f: ReturnType<typeof fixture>) => f.scripted.requests.filter(isSummaryRequest);

describe("auto-compaction before a request (threshold)", () => {
  it("compacts when the next request would exceed window minus reserve, then sends summary + tail", async () => {
    const f = smallWindow();
    const triggers: unknown[] = [];
    f.harness.hooks.beforeCompact.tapPromise("observer", async (request) => {
      triggers.push({ trigger: request.trigger, over: request.tokensBefore > WINDOW - 1_000 });
    });
    f.scripted.script([reply("first answer"), summaryReply("SUMMARY-T"), reply("second answer")]);
    await f.harness.prompt(`first ${"a".repeat(6_400)}`); // ~1 600 tokens
    const outcome = await f.harness.prompt(`second ${"b".repeat(6_400)}`); // would make ~3 200
    expect(outcome.status).toBe("completed");

    expect(triggers).toEqual([{ trigger: "threshold", over: true }]);
    expect(summaryRequests(f)).toHaveLength(1);
    expect(summaryPromptText(summaryRequests(f)[0] as never)).toContain("first aaaa");
    const sent = mainRequests(f).at(-1)?.context.messages ?? [];
    expect(textOf(sent[0] as never)).toContain("SUMMARY-T");
    expect(sent.map((m) => textOf(m as never).slice(0, 6))).toEqual([expect.any(String), "second"]);
    for (const request of f.scripted.requests) expect(fauxPromptTokens(request.context)).toBeLessThan(WINDOW);

    // Inside the run, in phase "turn", between turn_start and the request.
    const types = f.types();
    const start = types.lastIndexOf("compaction_start");
    expect(types.slice(types.lastIndexOf("turn_start"), start + 2)).toEqual([
      "turn_start",
      "compaction_start",
      "compaction_end",
    ]);
    expect(f.events[start]).toMatchObject({ reason: "threshold", runId: outcome.runId });
    expect(f.events[start + 1]).toMatchObject({ reason: "threshold", status: "done" });
  });

  it("does not compact when disabled: the full context is sent", async () => {
    const f = smallWindow({ compaction: { enabled: false } });
    f.scripted.script([reply("first answer"), reply("second answer")]);
    await f.harness.prompt(`first ${"a".repeat(6_400)}`);
    await f.harness.prompt(`second ${"b".repeat(6_400)}`);
    expect(summaryRequests(f)).toHaveLength(0);
    expect(f.types().filter((t) => t.startsWith("compaction"))).toEqual([]);
    expect(mainRequests(f).at(-1)?.context.messages).toHaveLength(3);
  });

  it("setCompactionSettings({ enabled: false }) applies to the next decision", async () => {
    const f = smallWindow();
    f.harness.setCompactionSettings({ enabled: false });
    expect(f.harness.compactionSettings).toMatchObject({ enabled: false, reserveTokens: 1_000 });
    f.scripted.script([reply("first answer"), reply("second answer")]);
    await f.harness.prompt(`first ${"a".repeat(6_400)}`);
    await f.harness.prompt(`second ${"b".repeat(6_400)}`);
    expect(summaryRequests(f)).toHaveLength(0);
  });

  it("a failed summary does not fail the run: compaction_end says why and the request goes out", async () => {
    const f = smallWindow({ retry: { enabled: false } });
    f.scripted.script([reply("first answer"), providerError("invalid api key"), reply("second answer")]);
    await f.harness.prompt(`first ${"a".repeat(6_400)}`);
    const outcome = await f.harness.prompt(`second ${"b".repeat(6_400)}`);
    expect(outcome.status).toBe("completed");
    expect(f.events.find((e) => e.type === "compaction_end")).toMatchObject({
      status: "failed",
      detail: expect.stringContaining("invalid api key"),
    });
    expect(f.session.branch().some((entry) => entry.type === "compaction")).toBe(false);
  });

  it("a throwing beforeCompact tap fails the run with a hook error", async () => {
    const f = smallWindow();
    f.harness.hooks.beforeCompact.tapPromise("broken", async () => {
      throw new Error("nope");
    });
    f.scripted.script([reply("first answer"), reply("never")]);
    await f.harness.prompt(`first ${"a".repeat(6_400)}`);
    await expect(f.harness.prompt(`second ${"b".repeat(6_400)}`)).rejects.toMatchObject({
      code: "hook",
      plugin: "broken",
      hook: "beforeCompact",
    });
    expect(f.messages().at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
    expect(f.harness.phase).toBe("idle");
  });

  it("abort during an automatic summary ends the run as aborted, with a closed message", async () => {
    const f = smallWindow();
    f.scripted.script([
      reply("first answer"),
      async () => {
        f.harness.abort("stop");
        return summaryReply("never used");
      },
    ]);
    await f.harness.prompt(`first ${"a".repeat(6_400)}`);
    const outcome = await f.harness.prompt(`second ${"b".repeat(6_400)}`);
    expect(outcome.status).toBe("aborted");
    expect(f.messages().at(-1)).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expect(f.session.branch().some((entry) => entry.type === "compaction")).toBe(false);
  });
});

describe("auto-compaction after a context overflow", () => {
  async function twoQuestions(f: ReturnType<typeof fixture>) {
    await f.harness.prompt("first question");
    return f.harness.prompt("second question");
  }

  it("compacts and repeats the turn once; the overflow error stays in the session", async () => {
    const f = smallWindow({ compaction: { keepRecentTokens: 5 } });
    const triggers: string[] = [];
    f.harness.hooks.beforeCompact.tapPromise("observer", async (request) => {
      triggers.push(request.trigger);
    });
    f.scripted.script([
      reply("first answer"),
      providerError(OVERFLOW),
      summaryReply("SUMMARY-O"),
      reply("second answer"),
    ]);
    const outcome = await twoQuestions(f);
    expect(outcome.status).toBe("completed");
    expect(triggers).toEqual(["overflow"]);
    expect(f.types()).not.toContain("retry"); // an overflow is never retried as is

    const branchMessages = f.session
      .branch()
      .flatMap((entry) => (entry.type === "message" ? [entry.message] : []));
    expect(branchMessages.some((m) => m.role === "assistant" && m.errorMessage === OVERFLOW)).toBe(true);
    const repeated = mainRequests(f).at(-1)?.context.messages ?? [];
    expect(textOf(repeated[0] as never)).toContain("SUMMARY-O");
    expect(textOf(repeated[1] as never)).toBe("second question");
    expect(f.messages().at(-1)).toMatchObject({ role: "assistant", stopReason: "stop" });

    // The failed turn is closed (and its save point passed) before the compaction; a new turn repeats it.
    const types = f.types();
    const start = types.indexOf("compaction_start");
    expect(types.slice(start - 2, start + 3)).toEqual([
      "turn_end",
      "save_point",
      "compaction_start",
      "compaction_end",
      "turn_start",
    ]);
    expect(f.events[start]).toMatchObject({ reason: "overflow" });
  });

  it("compacts at most once per turn: a second overflow ends the run with the error", async () => {
    const f = smallWindow({ compaction: { keepRecentTokens: 5 } });
    f.scripted.script([
      reply("first answer"),
      providerError(OVERFLOW),
      summaryReply("SUMMARY-O"),
      providerError(OVERFLOW),
      reply("never"),
    ]);
    const outcome = await twoQuestions(f);
    expect(outcome.status).toBe("error");
    expect(outcome.reason).toBe(OVERFLOW);
    expect(summaryRequests(f)).toHaveLength(1);
    expect(f.scripted.pending()).toBe(1);
    expect(f.messages().at(-1)).toMatchObject({ stopReason: "error", errorMessage: OVERFLOW });
  });

  it("does not compact when disabled: the overflow ends the run", async () => {
    const f = smallWindow({ compaction: { enabled: false, keepRecentTokens: 5 } });
    f.scripted.script([reply("first answer"), providerError(OVERFLOW), summaryReply("never")]);
    const outcome = await twoQuestions(f);
    expect(outcome.status).toBe("error");
    expect(summaryRequests(f)).toHaveLength(0);
    expect(f.types().filter((t) => t.startsWith("compaction"))).toEqual([]);
  });

  it("a beforeCompact cancel leaves the overflow error as the run's end", async () => {
    const f = smallWindow({ compaction: { keepRecentTokens: 5 } });
    f.harness.hooks.beforeCompact.tapPromise("keeper", async () => ({ cancel: { reason: "no" } }));
    f.scripted.script([reply("first answer"), providerError(OVERFLOW), reply("never")]);
    const outcome = await twoQuestions(f);
    expect(outcome.status).toBe("error");
    expect(f.events.find((e) => e.type === "compaction_end")).toMatchObject({
      reason: "overflow",
      status: "cancelled",
    });
  });
});

describe("automatic compaction in a JSONL session", () => {
  it("reopens to the same context, with the overflow error and the compaction recorded", async () => {
    const store = new SessionStore(tempDir());
    const scripted = scriptedModel({ models: [{ id: "small", contextWindow: WINDOW }] });
    const session = store.create();
    const harness = new AgentHarness({
      session,
      model: scripted.model,
      models: scripted.collection,
      requestOptions: { cacheRetention: "none" },
      compaction: { reserveTokens: 1_000, keepRecentTokens: 5 },
    });
    scripted.script([
      reply("first answer"),
      providerError(OVERFLOW),
      summaryReply("SUMMARY-J"),
      reply("second answer"),
      reply("third answer"),
      summaryReply("SUMMARY-K"),
      reply("fourth answer"),
    ]);
    await harness.prompt("first question");
    await harness.prompt("second question");
    await harness.prompt(`third ${"c".repeat(6_400)}`);
    await harness.prompt(`fourth ${"d".repeat(6_400)}`); // over the threshold: compacts first
    const context = session.buildContext();
    const entries = session.entries();
    session.close();

    const reopened = store.open(session.id);
    expect(reopened.entries()).toEqual(entries);
    expect(reopened.buildContext()).toEqual(context);
    expect(textOf(context.messages[0])).toContain("SUMMARY-K");
    const compactions = entries.filter((entry) => entry.type === "compaction");
    expect(compactions).toHaveLength(2);
    expect(
      entries.some(
        (entry) =>
          entry.type === "message" &&
          entry.message.role === "assistant" &&
          entry.message.errorMessage === OVERFLOW,
      ),
    ).toBe(true);
    reopened.close();
  });
});

describe("a long session", () => {
  it("2 000 scripted turns compact several times and every request stays under the window", async () => {
    const echo = echoTool();
    const f = smallWindow({ tools: [echo.tool], systemPrompt: "You are terse." });
    let summaries = 0;
    const model: FauxResponseFactory = (transcript) => {
      const context = requestContext(transcript);
      if (context.systemPrompt?.startsWith("You write summaries")) {
        summaries++;
        return summaryReply(`summary ${summaries}: ${"s".repeat(200)}`);
      }
      const last = context.messages.at(-1);
      if (last?.role === "user") {
        const size = 20 + ((context.messages.length * 37) % 1_200); // 5 to 300 tokens
        return callTools(["echo", { text: "t".repeat(size) }]);
      }
      return reply(`noted ${"n".repeat(context.messages.length % 160)}`);
    };
    f.scripted.script(Array.from({ length: 2_600 }, () => model));

    for (let run = 0; run < 1_000; run++) {
      const outcome = await f.harness.prompt(`task ${run}: ${"w".repeat(40 + ((run * 53) % 400))}`);
      expect(outcome.status).toBe("completed");
    }

    const main = mainRequests(f);
    expect(main).toHaveLength(2_000); // a tool call and a reply per run
    const compactions = f.session.entries().filter((entry) => entry.type === "compaction");
    expect(compactions.length).toBeGreaterThan(10);
    // A conversation longer than one summary request is summarised in chunks.
    expect(summaries).toBeGreaterThanOrEqual(compactions.length);
    const sizes = f.scripted.requests.map((request) => fauxPromptTokens(request.context));
    expect(Math.max(...sizes)).toBeLessThanOrEqual(WINDOW);
    expect(Math.max(...sizes)).toBeGreaterThan(WINDOW / 2); // the window was really approached
    // Each summary after the first carried the previous one forward.
    const prompts = summaryRequests(f).map((request) => summaryPromptText(request));
    for (let i = 1; i < prompts.length; i++) expect(prompts[i]).toContain(`summary ${i}:`);
    // Every turn's messages are still in the session file, in order.
    const recorded = f.session.entries().filter((entry) => entry.type === "message");
    expect(recorded).toHaveLength(1_000 * 4);
  });
});
