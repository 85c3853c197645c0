/**
 * Server lifecycle rules: tool-set changes at turn boundaries, timeouts, aborts,
 * start failures with their reasons, and process groups that die with Rein.
 * Uses a small fixture server (test/fixtures/changing-server.mjs) whose tool list
 * changes on request.
 */
import { getEventListeners } from "node:events";
import { isSdkError } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import mcp, { type McpStatus, readMcpStatus, resolveServer, ServerConnection } from "../src/index.js";
import {
  alive,
  childrenRunning,
  fixtureServer,
  groupAndSession,
  groupMembers,
  launchersRunning,
  tempDir,
  until,
} from "./helpers.js";

let t: TestHarness | undefined;
const connections: ServerConnection[] = [];
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  for (const connection of connections.splice(0)) await connection.close();
});

const toolNames = (request: { context: { tools?: { name: string }[] } } | undefined) =>
  (request?.context.tools ?? []).map((tool) => tool.name).filter((name) => name.startsWith("mcp__"));
const status = (harness: TestHarness) => readMcpStatus(harness.session.entries()) as McpStatus;
const quietEvents = { onTools: () => undefined, log: () => undefined };

function connect(options: Parameters<typeof resolveServer>[1]): ServerConnection {
  const connection = new ServerConnection(resolveServer("fx", options, { cwd: tempDir() }), quietEvents, {
    name: "test",
    version: "0",
  });
  connections.push(connection);
  return connection;
}

describe("tools/list_changed and the turn snapshot", () => {
  it("a tool added during a turn is offered from the next turn; a removed one is gone from the next turn", async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fx: fixtureServer() } }]],
      script: [
        { toolCalls: [{ name: "mcp__fx__add_extra" }] },
        { toolCalls: [{ name: "mcp__fx__extra" }] },
        // Same response: remove_extra runs, then extra, still in this turn's snapshot.
        { toolCalls: [{ name: "mcp__fx__remove_extra" }, { name: "mcp__fx__extra" }] },
        "done",
      ],
    });
    expect(toolNames(undefined)).toEqual([]);
    await t.prompt("change the tools");
    const [first, second, third, fourth] = t.requests;
    expect(toolNames(first)).not.toContain("mcp__fx__extra");
    expect(toolNames(second)).toContain("mcp__fx__extra");
    expect(toolNames(third)).toContain("mcp__fx__extra");
    expect(toolNames(fourth)).not.toContain("mcp__fx__extra");
    const results = t.messages().filter((message) => message.role === "toolResult");
    expect(results.map((result) => [result.toolName, result.isError])).toEqual([
      ["mcp__fx__add_extra", false],
      ["mcp__fx__extra", false],
      ["mcp__fx__remove_extra", false],
      // Callable in the turn that saw it: the harness ran it and the server answered.
      ["mcp__fx__extra", false],
    ]);
    expect(t.harness.tools.map((tool) => tool.name)).not.toContain("mcp__fx__extra");
    const recorded = t.session.entries().filter((entry) => entry.type === "custom");
    expect(recorded.length).toBeGreaterThanOrEqual(3);
    expect(status(t).servers[0]?.tools.map((tool) => tool.mcpName)).not.toContain("extra");
  });
});

describe("timeouts and aborts", () => {
  it("a call that outlives callTimeoutMs fails with call_timeout naming the server", async () => {
    const connection = connect({ ...fixtureServer(), callTimeoutMs: 300 });
    await connection.start();
    const started = Date.now();
    await expect(
      connection.call("sleep", { ms: 5_000 }, { signal: new AbortController().signal }),
    ).rejects.toMatchObject({ code: "call_timeout", server: "fx", tool: "sleep" });
    expect(Date.now() - started).toBeLessThan(2_000);
    // The server is still usable afterwards.
    const result = await connection.call("sleep", { ms: 1 }, { signal: new AbortController().signal });
    expect(result.content?.[0]).toMatchObject({ text: "slept 1" });
  });

  it("many calls under one run's signal leave no abort listener behind on it", async () => {
    const connection = connect(fixtureServer());
    await connection.start();
    const run = new AbortController();
    for (let i = 0; i < 20; i++) await connection.call("sleep", { ms: 0 }, { signal: run.signal });
    expect(getEventListeners(run.signal, "abort")).toHaveLength(0);
  });

  it("an aborted run stops waiting for the server at once", async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fx: fixtureServer() } }]],
      script: [{ toolCalls: [{ name: "mcp__fx__sleep", args: { ms: 10_000 } }] }, "done"],
    });
    const started = Date.now();
    const run = t.prompt("sleep");
    await until(() => (t?.eventsOf("tool_execution_start").length ?? 0) > 0, 5_000, "the call to start");
    await new Promise((r) => setTimeout(r, 100));
    t.harness.abort("stop");
    await run;
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("a timed-out tool call through the harness is an error result naming the server", async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fx: { ...fixtureServer(), callTimeoutMs: 200 } } }]],
      script: [{ toolCalls: [{ name: "mcp__fx__sleep", args: { ms: 5_000 } }] }, "done"],
    });
    await t.prompt("sleep");
    const [result] = t.messages().filter((message) => message.role === "toolResult");
    expect(result?.isError).toBe(true);
    expect(JSON.stringify(result?.content)).toContain('mcp server \\"fx\\"');
  });
});

describe("start failures are reported, not fatal, unless required", () => {
  it("a missing program, a crashing server and a missing env var each leave a reason in the status", async () => {
    t = await createTestHarness({
      plugins: [
        [
          mcp,
          {
            servers: {
              missing: { command: "/nonexistent/mcp-server" },
              crashes: {
                command: process.execPath,
                args: ["-e", "console.error('boom: bad config'); process.exit(3)"],
              },
              // biome-ignore lint/suspicious/noTemplateCurlyInString: ${VAR} is config syntax that Rein expands, not a template.
              noenv: { ...fixtureServer(), env: { TOKEN: "${REIN_MCP_TEST_UNSET_VARIABLE}" } },
              fx: fixtureServer(),
            },
          },
        ],
      ],
    });
    const byName = Object.fromEntries(status(t).servers.map((server) => [server.name, server]));
    expect(byName.missing).toMatchObject({ state: "failed" });
    expect(byName.missing?.reason).toMatch(/ENOENT/);
    expect(byName.crashes).toMatchObject({ state: "failed" });
    expect(byName.crashes?.reason).toMatch(/exited with code 3[\s\S]*boom: bad config/);
    expect(byName.noenv).toMatchObject({ state: "failed" });
    expect(byName.noenv?.reason).toMatch(/REIN_MCP_TEST_UNSET_VARIABLE/);
    expect(byName.fx).toMatchObject({ state: "ready" });
    expect(t.harness.tools.map((tool) => tool.name).every((name) => name.startsWith("mcp__fx__"))).toBe(true);
    expect(t.logs.filter((log) => log.level === "warn").length).toBeGreaterThanOrEqual(3);
  });

  it("a required server that cannot start fails setup with the server named", async () => {
    const failure = await createTestHarness({
      plugins: [[mcp, { servers: { gone: { command: "/nonexistent/mcp-server", required: true } } }]],
    }).catch((error: unknown) => error);
    expect(isSdkError(failure, "plugin_setup")).toBe(true);
    expect(failure).toMatchObject({
      plugin: "@rein/tools-mcp",
      cause: { code: "start_failed", server: "gone" },
    });
  });

  it("a failed setup leaves no server behind, not even one still starting", async () => {
    const marker = `rein-mcp-slow-${process.pid}`;
    const slow = {
      command: "/bin/sh",
      args: ["-c", `sleep 1; exec "$0" "$@" ${marker}`, fixtureServer().command, ...fixtureServer().args],
    };
    const failure = await createTestHarness({
      plugins: [[mcp, { servers: { slow, gone: { command: "/nonexistent/mcp-server", required: true } } }]],
    }).catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "plugin_setup", cause: { code: "start_failed", server: "gone" } });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(childrenRunning(marker)).toEqual([]);
  });

  it("a server that never answers is killed, group and all, after startTimeoutMs", async () => {
    const marker = `rein-mcp-silent-${process.pid}`;
    t = await createTestHarness({
      plugins: [
        [
          mcp,
          {
            servers: {
              silent: {
                command: "/bin/sh",
                args: ["-c", `sleep 30 & exec node -e 'setInterval(() => {}, 1000)' ${marker}`],
                startTimeoutMs: 300,
              },
            },
          },
        ],
      ],
    });
    expect(status(t).servers[0]).toMatchObject({ state: "failed" });
    expect(status(t).servers[0]?.reason).toMatch(/no answer within 300 ms/);
    await until(() => childrenRunning(marker).length === 0, 5_000, "the silent server to be killed");
  });

  it("bad server config fails loading with the server named", async () => {
    for (const [servers, code] of [
      [{ a__b: { command: "x" } }, "invalid_server"],
      [{ both: { command: "x", url: "http://127.0.0.1:1/mcp" } }, "invalid_server"],
      [{ neither: {} }, "invalid_server"],
      [{ ftp: { url: "ftp://127.0.0.1/mcp" } }, "invalid_server"],
    ] as const) {
      const failure = await createTestHarness({
        plugins: [[mcp, { servers: { ...servers, fx: fixtureServer() } }]],
      }).catch((error: unknown) => error);
      // A malformed entry fails loading even when the server is not required.
      const server = Object.keys(servers)[0];
      expect(failure, server).toMatchObject({ code: "plugin_setup", cause: { code, server } });
    }
  });
});

describe("dispose", () => {
  it("kills every stdio server's process group, grandchildren included", async () => {
    const marker = `rein-mcp-grandchild-${process.pid}`;
    t = await createTestHarness({
      plugins: [
        [
          mcp,
          {
            servers: {
              fx: {
                command: "/bin/sh",
                args: [
                  "-c",
                  `node -e 'setInterval(() => {}, 1000)' ${marker} & exec "$0" "$@"`,
                  fixtureServer().command,
                  ...fixtureServer().args,
                ],
              },
            },
          },
        ],
      ],
    });
    const [leader] = childrenRunning("changing-server.mjs");
    expect(leader).toBeDefined();
    const group = groupMembers(leader as number);
    expect(group.length).toBeGreaterThanOrEqual(2);
    expect(childrenRunning(marker)).toEqual([]); // the grandchild is not our child...
    expect(group.some((pid) => pid !== leader)).toBe(true); // ...but it is in the server's group
    await t.dispose();
    t = undefined;
    for (const pid of group) expect(alive(pid), `pid ${pid}`).toBe(false);
    await until(() => launchersRunning().length === 0, 5_000, "the launcher to exit");
  });

  it("a stdio server leads its own process group inside Rein's session (a new session is woken later)", async () => {
    t = await createTestHarness({ plugins: [[mcp, { servers: { fx: fixtureServer() } }]] });
    const [leader] = childrenRunning("changing-server.mjs");
    expect(leader).toBeDefined();
    const mine = groupAndSession(process.pid);
    const its = groupAndSession(leader as number);
    expect(its.pgid).toBe(leader);
    expect(its.pgid).not.toBe(mine.pgid);
    expect(its.sid).toBe(mine.sid);
  });
});
