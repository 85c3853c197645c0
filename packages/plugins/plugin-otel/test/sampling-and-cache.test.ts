/**
 * What the plugin decides itself now that spans are built without the SDK's
 * Tracer: sampling as the SDK's default sampler (parent-based, always on)
 * decides it, and the telemetry worker reusing the compile cache its host
 * enabled.
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

let receiver: OtlpReceiver | undefined;
let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  await receiver?.close();
  delete process.env.TRACEPARENT;
});

const runUnder = async (traceparent: string) => {
  receiver = await startOtlpReceiver();
  process.env.TRACEPARENT = traceparent;
  t = await createTestHarness({
    plugins: [[otel, { endpoint: receiver.url, batchDelayMs: 10 }]],
    script: ["hi"],
  });
  const outcome = await t.prompt("go");
  await t.dispose();
  t = undefined;
  return outcome;
};

describe("sampling follows the caller's trace flags", () => {
  it("a caller's unsampled trace (flags 00) exports no span, and the run is unaffected", async () => {
    const outcome = await runUnder("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
    expect(outcome.status).toBe("completed");
    expect(receiver?.problems).toEqual([]);
    expect(receiver?.spans).toEqual([]);
  });

  it("a caller's sampled trace (flags 01) exports the whole tree under it", async () => {
    await runUnder("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    const spans = receiver?.spans ?? [];
    expect(spans.map((span) => span.name.split(" ")[0]).sort()).toEqual(["chat", "invoke_agent"]);
    for (const span of spans) expect(span.traceId).toBe("4bf92f3577b34da6a3ce929d0e0e4736");
  });
});

const withoutCompileCacheVariables = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  return env;
};

describe("the telemetry worker's compile cache", () => {
  it("compiles the SDK into the cache folder its host enabled", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rein-otel-cache-"));
    try {
      // A separate process: the host enables the cache, as `rein` does at start.
      const script = `
        import module from "node:module";
        import fs from "node:fs";
        module.enableCompileCache(${JSON.stringify(join(dir, "cache"))});
        const { createTestHarness } = await import(${JSON.stringify(import.meta.resolve("@rein/sdk/testing"))});
        const { default: otel } = await import(${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)});
        module.flushCompileCache();
        const before = fs.readdirSync(module.getCompileCacheDir()).length;
        const t = await createTestHarness({ plugins: [[otel, { endpoint: "http://127.0.0.1:9", exportTimeoutMs: 200, shutdownTimeoutMs: 500 }]], script: ["hi"] });
        await t.prompt("go");
        await t.dispose();
        console.log(JSON.stringify({ before, after: fs.readdirSync(module.getCompileCacheDir()).length }));
      `;
      const file = join(dir, "host.mjs");
      writeFileSync(file, script);
      const { stdout } = await promisify(execFile)(process.execPath, [file], {
        env: withoutCompileCacheVariables(),
      });
      const { before, after } = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
        before: number;
        after: number;
      };
      // The worker's own modules (the OTLP exporters, the SDK) land in the same folder.
      expect(after - before).toBeGreaterThan(50);
      expect(readdirSync(join(dir, "cache")).length).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
