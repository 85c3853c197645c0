// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config syntax that Rein expands, not a template.
/**
 * End to end against real MCP servers from npm that nobody here wrote
 * (@modelcontextprotocol/server-filesystem and server-everything), started as
 * stdio children from node_modules, driven by a scripted model through Rein's
 * real plugin stack.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import permissions from "@rein/plugin-permissions";
import policy from "@rein/plugin-policy";
import redact from "@rein/plugin-redact";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import mcp, { type McpStatus, readMcpStatus } from "../src/index.js";
import {
  alive,
  childrenRunning,
  everythingServer,
  filesystemServer,
  groupMembers,
  serverScript,
  tempDir,
  until,
} from "./helpers.js";

const everythingScript = serverScript("server-everything");

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

const results = (harness: TestHarness) =>
  harness.messages().filter((message) => message.role === "toolResult");
const text = (result: { content: { type: string; text?: string }[] }) =>
  result.content.map((block) => block.text ?? `[${block.type}]`).join("\n");
const status = (harness: TestHarness): McpStatus => readMcpStatus(harness.session.entries()) as McpStatus;

describe("server-filesystem behind policy and permissions", () => {
  it("registers its tools as mcp__fs__<tool> with risks from the annotations", async () => {
    const root = tempDir();
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fs: filesystemServer(root) } }]],
      config: { cwd: root },
    });
    const tools = Object.fromEntries(t.harness.tools.map((tool) => [tool.name, tool]));
    expect(tools.mcp__fs__read_text_file?.risk).toBe("read");
    expect(tools.mcp__fs__write_file?.risk).toBe("write");
    expect(tools.mcp__fs__create_directory?.risk).toBe("write");
    expect(tools.mcp__fs__write_file?.owner).toBe("@rein/tools-mcp");
    const server = status(t).servers[0];
    expect(server).toMatchObject({ name: "fs", state: "ready", restarts: 0 });
    expect(server?.tools.find((tool) => tool.mcpName === "write_file")).toMatchObject({
      name: "mcp__fs__write_file",
      risk: "write",
    });
  });

  it("a denied write never reaches the server; an allowed one does; asks without a terminal are denied", async () => {
    const root = tempDir();
    mkdirSync(join(root, "notes"));
    mkdirSync(join(root, "secrets"));
    const writeTools = ["mcp__fs__write_file", "mcp__fs__read_text_file"];
    t = await createTestHarness({
      plugins: [
        [mcp, { servers: { fs: filesystemServer(root) } }],
        [
          policy,
          {
            pathTools: writeTools,
            rules: [
              { id: "notes", rule: "mcp__fs__write_file(notes/**)", decision: "allow" },
              {
                id: "secrets",
                rule: "mcp__fs__write_file(secrets/**)",
                decision: "deny",
                reason: "secrets are off limits",
              },
              { id: "fs-moves", rule: "mcp__fs__move_file", decision: "ask" },
            ],
          },
        ],
        [permissions, { prompt: "never" }],
      ],
      config: { cwd: root },
      script: [
        {
          toolCalls: [
            { name: "mcp__fs__write_file", args: { path: "secrets/key.txt", content: "leak" } },
            { name: "mcp__fs__write_file", args: { path: "notes/a.txt", content: "hello" } },
            { name: "mcp__fs__move_file", args: { source: "notes/a.txt", destination: "b.txt" } },
            { name: "mcp__fs__write_file", args: { path: "other.txt", content: "unruled" } },
          ],
        },
        "done",
      ],
    });
    await t.prompt("write things");
    // Server side: only the allowed write happened.
    expect(existsSync(join(root, "secrets", "key.txt"))).toBe(false);
    expect(readFileSync(join(root, "notes", "a.txt"), "utf8")).toBe("hello");
    expect(existsSync(join(root, "b.txt"))).toBe(false);
    expect(existsSync(join(root, "other.txt"))).toBe(false);
    const decisions = t.decisions();
    expect(decisions[0]).toMatchObject({ decision: "deny", by: "policy:secrets" });
    expect(decisions[1]).toMatchObject({ decision: "allow", by: "policy:notes" });
    expect(decisions[2]).toMatchObject({ decision: "deny", askedBy: "policy:fs-moves" });
    // No rule: the permissions default for risk "write" is ask, and nobody can answer.
    expect(decisions[3]).toMatchObject({ decision: "deny", askedBy: "harness:default" });
    const [denied, allowed] = results(t);
    expect(denied?.isError).toBe(true);
    expect(text(denied as never)).toContain("secrets are off limits");
    expect(allowed?.isError).toBe(false);
  });

  it("results are redacted before the model and the session see them", async () => {
    const root = tempDir();
    const token = `ghp_${"a1B2c3D4e5".repeat(4)}`;
    writeFileSync(join(root, "config.txt"), `token=${token}\n`);
    t = await createTestHarness({
      plugins: [[mcp, { servers: { fs: filesystemServer(root) } }], redact],
      config: { cwd: root },
      script: [{ toolCalls: [{ name: "mcp__fs__read_text_file", args: { path: "config.txt" } }] }, "done"],
    });
    await t.prompt("read it");
    const [result] = results(t);
    expect(text(result as never)).toContain("[redacted:github-token]");
    expect(JSON.stringify(t.session.entries())).not.toContain(token);
  });
});

describe("server-everything: content, isolation, restart, dispose", () => {
  it("maps images and embedded resources to pi-ai content, and validates arguments by the server's schema", async () => {
    t = await createTestHarness({
      plugins: [[mcp, { servers: { every: everythingServer() } }]],
      script: [
        {
          toolCalls: [
            { name: "mcp__every__get-tiny-image", args: {} },
            { name: "mcp__every__get-resource-reference", args: { resourceType: "Text", resourceId: 2 } },
            { name: "mcp__every__get-sum", args: { a: "2", b: 3 } },
            { name: "mcp__every__get-sum", args: { a: 1 } },
          ],
        },
        "done",
      ],
    });
    await t.prompt("go");
    const [image, resource, sum, invalid] = results(t);
    expect(image?.content.some((block) => block.type === "image" && block.mimeType === "image/png")).toBe(
      true,
    );
    expect(text(resource as never)).toMatch(
      /\[resource demo:\/\/resource\/dynamic\/text\/2\]\nResource 2: This is a plaintext resource/,
    );
    expect(text(sum as never)).toContain("5");
    expect(invalid?.isError).toBe(true);
    expect(text(invalid as never)).toMatch(/Validation failed for tool "mcp__every__get-sum"[\s\S]*\bb\b/);
  });

  it("include / exclude pick tools; risks and trustAnnotations override the annotations; paths are recorded", async () => {
    t = await createTestHarness({
      plugins: [
        [
          mcp,
          {
            servers: {
              one: { ...everythingServer(), include: ["echo", "get-sum"], risks: { "get-sum": "network" } },
              two: {
                ...everythingServer(),
                exclude: ["get-env"],
                trustAnnotations: false,
                paths: { "*": ["message"] },
              },
            },
          },
        ],
      ],
    });
    const risks = Object.fromEntries(t.harness.tools.map((tool) => [tool.name, tool.risk]));
    expect(Object.keys(risks).filter((name) => name.startsWith("mcp__one__"))).toEqual([
      "mcp__one__echo",
      "mcp__one__get-sum",
    ]);
    expect(risks.mcp__one__echo).toBe("read");
    expect(risks["mcp__one__get-sum"]).toBe("network");
    expect(risks["mcp__two__get-env"]).toBeUndefined();
    expect(risks.mcp__two__echo).toBe("exec");
    const two = status(t).servers.find((server) => server.name === "two");
    expect(two?.tools.find((tool) => tool.mcpName === "echo")).toMatchObject({
      risk: "exec",
      paths: ["message"],
    });
  });

  it("passes a stdio server only a safe environment plus its own env, expanded from ${VAR}", async () => {
    process.env.REIN_MCP_TEST_PARENT_SECRET = "parent-only-value";
    process.env.REIN_MCP_TEST_GIVEN = "given-value";
    try {
      t = await createTestHarness({
        plugins: [
          [
            mcp,
            { servers: { every: { ...everythingServer(), env: { GIVEN: "x-${REIN_MCP_TEST_GIVEN}" } } } },
          ],
        ],
        script: [{ toolCalls: [{ name: "mcp__every__get-env", args: {} }] }, "done"],
      });
      await t.prompt("env");
      const output = text(results(t)[0] as never);
      expect(output).toContain("x-given-value");
      expect(output).not.toContain("parent-only-value");
    } finally {
      delete process.env.REIN_MCP_TEST_PARENT_SECRET;
      delete process.env.REIN_MCP_TEST_GIVEN;
    }
  });

  it("restarts a crashed server and serves the next call; dispose leaves no process behind", async () => {
    const pids: number[] = [];
    t = await createTestHarness({
      plugins: [[mcp, { servers: { every: everythingServer() } }]],
      script: [{ toolCalls: [{ name: "mcp__every__echo", args: { message: "one" } }] }, "done"],
    });
    await t.prompt("first");
    expect(text(results(t)[0] as never)).toContain("one");
    const first = serverPid(everythingScript);
    pids.push(first);
    expect(alive(first)).toBe(true);
    process.kill(first, "SIGKILL");
    await until(() => !alive(first), 5_000, "the server to die");
    // Rein notices the crash (the pipe closes) and restarts it with backoff; the next call waits for it.
    await until(
      () => t?.logs.some((log) => /restarting in/.test(log.message)) ?? false,
      5_000,
      "crash noticed",
    );
    t.script({ toolCalls: [{ name: "mcp__every__echo", args: { message: "two" } }] }, "done");
    await t.prompt("second");
    expect(text(results(t)[1] as never)).toContain("two");
    const second = serverPid(everythingScript);
    expect(second).not.toBe(first);
    pids.push(second);
    expect(t.logs.some((log) => /restarted/.test(log.message))).toBe(true);
    const group = groupMembers(second);
    expect(group).toContain(second);
    await t.dispose();
    t = undefined;
    for (const pid of [...pids, ...group]) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect(groupMembers(second)).toEqual([]);
  });
});

/** The pid of this process's one live child running `script` (the stdio server). */
function serverPid(script: string): number {
  const found = childrenRunning(script);
  expect(found, `children running ${script}`).toHaveLength(1);
  return found[0] as number;
}
