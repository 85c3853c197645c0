/**
 * Many harnesses, one telemetry thread: a process running many sessions (a
 * `rein worker`) does not start a thread per harness, and one harness going
 * away neither stops nor loses another's telemetry.
 */
import { readdirSync } from "node:fs";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import otel from "../src/index.js";
import { type OtlpReceiver, startOtlpReceiver } from "./support/otlp-receiver.js";

const threads = () => readdirSync("/proc/self/task").length;
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

let receiver: OtlpReceiver | undefined;
const harnesses: TestHarness[] = [];
afterEach(async () => {
  for (const t of harnesses.splice(0)) await t.dispose();
  await receiver?.close();
});

describe("the telemetry worker thread", () => {
  it("is one per process and configuration, and lives until the last harness is disposed", async () => {
    receiver = await startOtlpReceiver();
    const options = { endpoint: receiver.url, batchDelayMs: 10 };
    const before = threads();
    harnesses.push(await createTestHarness({ plugins: [[otel, options]], script: ["one"] }));
    await settle();
    const withOne = threads();
    expect(withOne).toBeGreaterThan(before);
    for (let i = 0; i < 4; i++) {
      harnesses.push(await createTestHarness({ plugins: [[otel, options]], script: [`h${i}`] }));
    }
    await settle();
    expect(threads()).toBe(withOne);

    const outcomes = await Promise.all(harnesses.map((t) => t.prompt("go")));
    // The first goes away; the others' spans still arrive.
    await harnesses.shift()?.dispose();
    for (const t of harnesses.splice(0)) await t.dispose();
    const runs = receiver.spans.filter((span) => span.name === "invoke_agent rein");
    expect(runs.map((span) => span.attributes["rein.run.id"]).sort()).toEqual(
      outcomes.map((o) => o.runId).sort(),
    );
    expect(new Set(runs.map((span) => span.traceId)).size).toBe(5);
    await settle();
    expect(threads()).toBeLessThan(withOne);
  });
});
