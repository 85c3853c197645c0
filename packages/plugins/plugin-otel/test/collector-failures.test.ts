/**
 * A collector that is down, or that accepts and never answers, never fails or
 * delays a run: one warning, and disposing returns within its bound.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { defineTool, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import otel from "../src/index.js";

const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  parameters: Type.Object({ command: Type.String() }),
  execute: (args) => ({ content: [{ type: "text", text: `ran ${args.command}` }] }),
});
const script = [
  { toolCalls: [{ name: "bash", args: { command: "a" } }] },
  { toolCalls: [{ name: "bash", args: { command: "b" } }] },
  "done",
];

let t: TestHarness | undefined;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Accepts connections and requests, never answers. */
async function blackHole(): Promise<string> {
  const sockets = new Set<Socket>();
  const server = http.createServer(() => undefined);
  server.on("connection", (socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const warnings = (harness: TestHarness) => harness.logs.filter((log) => log.level === "warn");

describe("an unusable collector", () => {
  it("is down: the run completes, one warning names the endpoint problem, dispose is prompt", async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    t = await createTestHarness({
      plugins: [[otel, { endpoint, batchDelayMs: 1, maxBatchSize: 1 }]],
      tools: [bash],
      script,
    });
    const outcome = await t.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(t.decisions().map((d) => d.decision)).toEqual(["allow", "allow"]);
    // Give the batches (one span each) time to fail, then dispose.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await t.dispose();
    expect(Date.now() - started).toBeLessThan(3_500);
    // Traces and metrics both failed: still one warning.
    expect(warnings(t)).toHaveLength(1);
    expect(warnings(t)[0]).toMatchObject({
      plugin: "otel",
      message: expect.stringContaining("ECONNREFUSED"),
    });
  });

  it("never answers: dispose returns within shutdownTimeoutMs and says telemetry was dropped", async () => {
    const endpoint = await blackHole();
    t = await createTestHarness({
      plugins: [[otel, { endpoint, shutdownTimeoutMs: 300, exportTimeoutMs: 5_000 }]],
      tools: [bash],
      script,
    });
    const runStarted = Date.now();
    const outcome = await t.prompt("go");
    expect(outcome.status).toBe("completed");
    // Nothing on the turn path waits for the collector.
    expect(Date.now() - runStarted).toBeLessThan(1_000);
    const started = Date.now();
    await t.dispose();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(1_500);
    expect(warnings(t).map((log) => log.message)).toEqual([
      expect.stringContaining("telemetry not fully sent within 300 ms"),
    ]);
  });
});
