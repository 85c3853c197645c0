/**
 * Protocol revisions: Rein speaks MCP 2026-07-28 to a server that offers it and
 * 2025-11-25 (the `initialize` handshake) to one that does not, over stdio; the
 * `protocol` option pins either. Peers: the fixture on the v2 SDK (both eras, or
 * 2026-07-28 only with --modern-only), server-everything from npm on the 1.x SDK
 * (2025 only), and a hand-rolled 2025 server that exits on the probe.
 */
import { join } from "node:path";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import mcp, { type McpStatus, readMcpStatus } from "../src/index.js";
import { everythingServer, fixtureServer } from "./helpers.js";

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

const status = (harness: TestHarness) => (readMcpStatus(harness.session.entries()) as McpStatus).servers;
const resultText = (harness: TestHarness) =>
  harness
    .messages()
    .filter((message) => message.role === "toolResult")
    .map((message) => JSON.stringify(message.content));

describe("protocol negotiation over stdio", () => {
  it("a server that offers 2026-07-28 gets it by default", async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fx: fixtureServer() } }]],
      script: [{ toolCalls: [{ name: "mcp__fx__era" }] }, "done"],
    });
    expect(status(t)[0]).toMatchObject({ state: "ready", protocolVersion: "2026-07-28" });
    await t.prompt("era");
    expect(resultText(t)[0]).toContain("modern");
  });

  it('protocol "2025-11-25" speaks the 2025 handshake to the same server, list_changed included', async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fx: { ...fixtureServer(), protocol: "2025-11-25" } } }]],
      script: [
        { toolCalls: [{ name: "mcp__fx__era" }, { name: "mcp__fx__add_extra" }] },
        { toolCalls: [{ name: "mcp__fx__extra" }] },
        "done",
      ],
    });
    expect(status(t)[0]).toMatchObject({ state: "ready", protocolVersion: "2025-11-25" });
    await t.prompt("era, then the new tool");
    const texts = resultText(t);
    expect(texts[0]).toContain("legacy");
    // The unsolicited 2025 notification re-listed the tools before the next turn.
    expect(texts[2]).toContain("extra ran");
  });

  it("a 2025-only server from npm (server-everything, 1.x SDK) gets 2025-11-25 by default", async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { every: everythingServer() } }]],
      script: [{ toolCalls: [{ name: "mcp__every__echo", args: { message: "old peer" } }] }, "done"],
    });
    expect(status(t)[0]).toMatchObject({ state: "ready", protocolVersion: "2025-11-25" });
    await t.prompt("echo");
    expect(resultText(t)[0]).toContain("old peer");
  });

  it("a 2025 server that exits on the probe is started once more with the 2025 handshake", async () => {
    t = await createTestHarness({
      plugins: [
        [
          mcp,
          {
            servers: {
              strict: {
                command: process.execPath,
                args: [join(import.meta.dirname, "fixtures", "exits-on-probe.mjs")],
              },
            },
          },
        ],
      ],
      script: [{ toolCalls: [{ name: "mcp__strict__hello" }] }, "done"],
    });
    expect(status(t)[0]).toMatchObject({ state: "ready", protocolVersion: "2025-11-25" });
    await t.prompt("hello");
    expect(resultText(t)[0]).toContain("hello from 2025");
  });

  it.each([
    {
      name: 'protocol "2026-07-28" against a 2025-only server',
      server: { ...everythingServer(), protocol: "2026-07-28" as const },
      reason: /failed to start: .*2026-07-28/,
    },
    {
      name: 'protocol "2025-11-25" against a 2026-07-28-only server',
      server: { ...fixtureServer("--modern-only"), protocol: "2025-11-25" as const },
      reason: /failed to start: .*[Uu]nsupported protocol version/,
    },
  ])("$name fails to start, naming the server", async ({ server, reason }) => {
    t = await createTestHarness({ plugins: [[mcp, { servers: { pinned: server } }]] });
    const [entry] = status(t);
    expect(entry).toMatchObject({ name: "pinned", state: "failed" });
    expect(entry?.reason).toMatch(/mcp server "pinned"/);
    expect(entry?.reason).toMatch(reason);
    expect(t.harness.tools).toHaveLength(0);
  });

  it("an unknown protocol value is refused at load, naming the option", async () => {
    await expect(
      createTestHarness({
        plugins: [[mcp, { servers: { fx: { ...fixtureServer(), protocol: "2024-01-01" } } }]],
      }),
    ).rejects.toMatchObject({ code: "invalid_options", message: expect.stringContaining("protocol") });
  });
});
