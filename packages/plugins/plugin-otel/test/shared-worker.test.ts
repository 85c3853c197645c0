/**
 * Many harnesses, one telemetry thread: a process running many sessions (a
 * `rein worker`) does not start a thread per harness, and one harness going
 * away neither stops nor loses another's telemetry, and its own has left by
 * the time its dispose returns.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
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

  it("sends a harness's spans by the time it is disposed, while other harnesses keep the worker", async () => {
    receiver = await startOtlpReceiver();
    // A batch delay no test waits for: only the dispose's flush can send these spans.
    const options = { endpoint: receiver.url, batchDelayMs: 60_000 };
    const staying = await createTestHarness({ plugins: [[otel, options]], script: ["stays"] });
    harnesses.push(staying);
    const leaving = await createTestHarness({ plugins: [[otel, options]], script: ["leaves"] });
    await settle();
    const withWorker = threads();
    const outcome = await leaving.prompt("go");
    await leaving.dispose();
    const runs = receiver.spans.filter((span) => span.name === "invoke_agent rein");
    expect(runs.map((span) => span.attributes["rein.run.id"])).toEqual([outcome.runId]);
    expect(leaving.logs.filter((log) => log.level === "warn")).toEqual([]);
    // The worker goes on for the harness that stayed, and still exports its run.
    expect(threads()).toBe(withWorker);
    const stayed = await staying.prompt("go");
    await harnesses.splice(0)[0]?.dispose();
    expect(
      receiver.spans
        .filter((span) => span.name === "invoke_agent rein")
        .map((s) => s.attributes["rein.run.id"]),
    ).toEqual([outcome.runId, stayed.runId]);
  });

  it("never holds the process open: a process that never disposes its harness still exits", async () => {
    receiver = await startOtlpReceiver();
    const dir = mkdtempSync(join(tmpdir(), "rein-otel-exit-"));
    try {
      const script = `
        const { createTestHarness } = await import(${JSON.stringify(import.meta.resolve("@rein/sdk/testing"))});
        const { default: otel } = await import(${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)});
        const t = await createTestHarness({ plugins: [[otel, { endpoint: ${JSON.stringify(receiver.url)} }]], script: ["hi"] });
        const outcome = await t.prompt("go");
        console.log(outcome.status);
      `;
      const file = join(dir, "host.mjs");
      writeFileSync(file, script);
      // Killed (and failed) if the worker thread kept the process alive.
      const { stdout } = await promisify(execFile)(process.execPath, [file], { timeout: 25_000 });
      expect(stdout.trim()).toBe("completed");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);
});
