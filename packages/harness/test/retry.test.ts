import { fauxAssistantMessage } from "@earendil-works/pi-ai";
import { afterEach, describe, expect, it } from "vitest";
import { AgentHarness } from "../src/harness/agent-harness.js";
import { isTransientError, retryDelay } from "../src/loop/retry.js";
import { SessionStore } from "../src/session/session-store.js";
import { providerError, removeTempDirs, tempDir } from "./support/compaction.js";
import { fixture } from "./support/harness-fixture.js";
import { reply, scriptedModel } from "./support/scripted-model.js";

afterEach(removeTempDirs);

const errorMessage = (text: string) => fauxAssistantMessage([], { stopReason: "error", errorMessage: text });

describe("which provider errors are transient", () => {
  it.each([
    "429 Too Many Requests",
    "rate limit exceeded",
    "Overloaded",
    "503 Service Unavailable",
    "502 Bad Gateway",
    "read ECONNRESET",
    "connect ETIMEDOUT 1.2.3.4:443",
    "network error",
    "TypeError: fetch failed",
  ])("%s is retried", (text) => {
    expect(isTransientError(errorMessage(text))).toBe(true);
  });

  it.each([
    "invalid x-api-key",
    "prompt is too long: 213429 tokens > 200000 maximum", // an overflow, and 429 only inside a number
    "Your input exceeds the context window of this model",
    "400 invalid request",
  ])("%s is not retried", (text) => {
    expect(isTransientError(errorMessage(text))).toBe(false);
  });

  it("an aborted message is never retried", () => {
    const aborted = fauxAssistantMessage([], { stopReason: "aborted", errorMessage: "503 overloaded" });
    expect(isTransientError(aborted)).toBe(false);
  });

  it("backoff doubles per retry, stays within [half, full] of it, and is capped", () => {
    const policy = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1_000 };
    expect(retryDelay(policy, 1, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, () => 1)).toBe(100);
    expect(retryDelay(policy, 3, () => 1)).toBe(400);
    expect(retryDelay(policy, 8, () => 1)).toBe(1_000);
    expect(retryDelay({ ...policy, baseDelayMs: 0 }, 5)).toBe(0);
  });
});

describe("retrying a run's request", () => {
  it("retries a transient error and succeeds, with one retry event per attempt and the same request", async () => {
    const f = fixture({ retry: { baseDelayMs: 0, maxAttempts: 3 } });
    f.scripted.script([providerError("429 rate limit"), providerError("overloaded"), reply("finally")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(f.scripted.requests).toHaveLength(3);
    // Every attempt sends what the first did: failed attempts are not part of the turn's context.
    const sent = f.scripted.requests.map((r) => r.context.messages);
    expect(sent[1]).toEqual(sent[0]);
    expect(sent[2]).toEqual(sent[0]);
    expect(f.events.filter((e) => e.type === "retry")).toEqual([
      expect.objectContaining({ attempt: 2, maxAttempts: 3, delayMs: 0, errorMessage: "429 rate limit" }),
      expect.objectContaining({ attempt: 3, maxAttempts: 3, delayMs: 0, errorMessage: "overloaded" }),
    ]);
    // Honest history: each failed attempt is a closed error message, then the answer.
    expect(f.messages().map((m) => (m.role === "assistant" ? m.stopReason : m.role))).toEqual([
      "user",
      "error",
      "error",
      "stop",
    ]);
    expect(f.types().filter((t) => t === "turn_start")).toHaveLength(1); // one turn
  });

  it("gives up after maxAttempts: the final failure is a closed error message", async () => {
    const f = fixture({ retry: { baseDelayMs: 0, maxAttempts: 3 } });
    f.scripted.script([
      providerError("503 overloaded"),
      providerError("503 overloaded"),
      providerError("503 overloaded"),
      reply("never"),
    ]);
    const outcome = await f.harness.prompt("go");
    expect(outcome).toMatchObject({ status: "error", reason: "503 overloaded" });
    expect(f.scripted.requests).toHaveLength(3);
    expect(f.events.filter((e) => e.type === "retry")).toHaveLength(2);
    expect(f.messages().at(-1)).toMatchObject({ role: "assistant", stopReason: "error" });
    expect(f.types().slice(-4)).toEqual(["turn_end", "save_point", "agent_end", "settled"]);
  });

  it("does not retry a non-transient error", async () => {
    const f = fixture({ retry: { baseDelayMs: 0 } });
    f.scripted.script([providerError("invalid api key"), reply("never")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("error");
    expect(f.scripted.requests).toHaveLength(1);
    expect(f.types()).not.toContain("retry");
  });

  it("does not retry when disabled", async () => {
    const f = fixture({ retry: { enabled: false } });
    f.scripted.script([providerError("429 rate limit"), reply("never")]);
    expect((await f.harness.prompt("go")).status).toBe("error");
    expect(f.scripted.requests).toHaveLength(1);
    f.harness.setRetrySettings({ enabled: true, baseDelayMs: 0 });
    f.scripted.script([providerError("429 rate limit"), reply("now")]);
    expect((await f.harness.prompt("again")).status).toBe("completed");
  });

  it("abort during the backoff ends the run at once as aborted, without another request", async () => {
    // An hour of backoff: the run can only end if the abort cuts the wait short.
    const f = fixture({ retry: { baseDelayMs: 3_600_000, maxDelayMs: 3_600_000 } });
    f.harness.on("retry", () => {
      setImmediate(() => f.harness.abort("user gave up")); // once the backoff has begun
    });
    f.scripted.script([providerError("429 rate limit"), reply("never")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("aborted");
    expect(f.scripted.requests).toHaveLength(1);
    expect(f.scripted.pending()).toBe(1);
    expect(f.messages().map((m) => (m.role === "assistant" ? m.stopReason : m.role))).toEqual([
      "user",
      "error",
      "aborted",
    ]);
    expect(f.harness.phase).toBe("idle");
  });

  it("a JSONL session reopens with every attempt recorded, closed, in order", async () => {
    const store = new SessionStore(tempDir());
    const scripted = scriptedModel();
    const session = store.create();
    const harness = new AgentHarness({
      session,
      model: scripted.model,
      models: scripted.collection,
      retry: { baseDelayMs: 0 },
    });
    scripted.script([providerError("503 overloaded"), reply("ok")]);
    await harness.prompt("go");
    session.close();
    const reopened = store.open(session.id);
    expect(
      reopened.buildContext().messages.map((m) => (m.role === "assistant" ? m.stopReason : m.role)),
    ).toEqual(["user", "error", "stop"]);
    reopened.close();
  });

  it("rejects invalid settings", () => {
    expect(() => fixture({ retry: { maxAttempts: 0 } })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    const f = fixture();
    expect(() => f.harness.setRetrySettings({ baseDelayMs: -1 })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => f.harness.setCompactionSettings({ keepRecentTokens: 1.5 })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
  });
});
