/**
 * What a worker accepts as a prompt job: the fields it needs, checked; a trace
 * context only when it is a well-formed W3C traceparent (dropped otherwise, never
 * forwarded, and never a reason to refuse the job).
 */
import { describe, expect, it } from "vitest";
import { parsePromptJob } from "../src/worker/prompt-queue.js";

const job = { requestId: "r1", sessionId: "s1", prompt: "go", submittedAt: 1 };
const traceparent = "00-8a3c60f7d188f8fa79d48a391a778fa6-53995c3f42cd8ad8-01";

describe("parsePromptJob", () => {
  it("keeps a well-formed traceparent", () => {
    expect(parsePromptJob({ ...job, traceparent })).toEqual({ ...job, traceparent });
  });

  it.each([
    ["not a traceparent", "hello"],
    ["an all-zero trace id", "00-00000000000000000000000000000000-53995c3f42cd8ad8-01"],
    ["another version", "01-8a3c60f7d188f8fa79d48a391a778fa6-53995c3f42cd8ad8-01"],
    ["a header injection", `${traceparent}\r\nx-evil: 1`],
    ["a number", 42],
  ])("drops %s and still runs the job", (_what, value) => {
    expect(parsePromptJob({ ...job, traceparent: value })).toEqual(job);
  });

  it("refuses a job without its fields, naming the field", () => {
    expect(parsePromptJob({ ...job, prompt: "" })).toEqual({ refused: expect.stringContaining("prompt") });
    expect(parsePromptJob({ ...job, sessionId: "../x" })).toEqual({
      refused: expect.stringContaining("sessionId"),
    });
  });
});
