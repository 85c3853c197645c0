/**
 * `rein mcp serve` driven by the MCP SDK's real client, against the built CLI
 * (dist/bin.js) in a temporary project: Rein's own tool pack and an upstream MCP
 * server (server-filesystem from npm) behind policy, permissions and redaction.
 */
import { existsSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { request } from "node:http";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client, type ClientOptions, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, describe, expect, it } from "vitest";
import { cacheRoot, cleanup, project, REIN_BIN, rein, spawnRein } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dist = (pkg: string) => join(repo, "packages", "plugins", pkg, "dist", "index.js");
const fsServerScript = createRequire(join(repo, "packages/plugins/tools-mcp/package.json")).resolve(
  "@modelcontextprotocol/server-filesystem/dist/index.js",
);
const TOKEN = `ghp_${"Zy9Xw8Vu7T".repeat(4)}`;
const ENV_SECRET = "DB_PASSWORD=hunter2-e2e";

function config(extra = "", morePlugins = ""): string {
  return `import { defineConfig } from "@rein/sdk";
import mcp from ${JSON.stringify(dist("tools-mcp"))};
import fsTools from ${JSON.stringify(dist("tools-fs"))};
import policy from ${JSON.stringify(dist("plugin-policy"))};
import permissions from ${JSON.stringify(dist("plugin-permissions"))};
import redact from ${JSON.stringify(dist("plugin-redact"))};
import guard from ${JSON.stringify(dist("plugin-guard"))};
import audit from ${JSON.stringify(dist("plugin-audit"))};

export default defineConfig({
  model: "anthropic/claude-sonnet-4-5",
  plugins: [
    fsTools,
    [mcp, { servers: { fs: { command: process.execPath, args: [${JSON.stringify(fsServerScript)}, "."] } } }],
    [policy, {
      pathTools: ["read", "write", "mcp__fs__write_file"],
      rules: [
        { id: "notes", rule: "mcp__fs__write_file(notes/**)", decision: "allow", reason: "notes are fine" },
        { id: "secrets", rule: "mcp__fs__write_file(secrets/**)", decision: "deny", reason: "secrets stay put" },
        { id: "no-moves", rule: "mcp__fs__move_file", decision: "deny", reason: "nothing moves" },
        { id: "env", rule: "read(.env)", decision: "deny", reason: ".env holds secrets" },
      ],
    }],
    permissions,
    redact,
    ${morePlugins}
  ],
  ${extra}
});
`;
}

const newProject = (extra = "", morePlugins = "") =>
  project({
    "rein.config.ts": config(extra, morePlugins),
    "notes/.keep": "",
    "secrets/.keep": "",
    "creds.txt": `token=${TOKEN}\n`,
    ".env": `${ENV_SECRET}\n`,
  });

const textOf = (result: unknown) =>
  ((result as { content: { type: string; text?: string }[] }).content ?? [])
    .map((b) => b.text ?? "")
    .join("\n");
const decisionOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.["rein/decision"];

/** The two protocol eras a client can open with: 2026-07-28 (probe) or the 2025 `initialize`. */
const ERAS: { era: "modern" | "legacy"; version: string; options: ClientOptions }[] = [
  { era: "modern", version: "2026-07-28", options: { versionNegotiation: { mode: "auto" } } },
  { era: "legacy", version: "2025-11-25", options: { versionNegotiation: { mode: "legacy" } } },
];

async function stdioClient(cwd: string, options: ClientOptions = ERAS[0]?.options ?? {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [REIN_BIN, "mcp", "serve"],
    cwd,
    env: { ...(process.env as Record<string, string>), NO_COLOR: "1", REIN_CACHE_DIR: cacheRoot },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const client = new Client({ name: "rein-test", version: "1.0.0" }, options);
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

describe("rein mcp serve", { timeout: 90_000 }, () => {
  it("lists, allows, denies with the reason, denies an ask without a terminal, redacts, and records for replay", async () => {
    const dir = newProject();
    const { client, transport, stderr } = await stdioClient(dir);
    const pid = transport.pid as number;
    let upstream: number[] = [];
    try {
      // A 2026-07-28 connect costs no round trip on the serving process, so the first
      // request is what proves it is up.
      const { tools } = await client.listTools();
      upstream = childrenOf(pid, "server-filesystem");
      expect(upstream).toHaveLength(1);
      const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
      expect(Object.keys(byName)).toEqual(expect.arrayContaining(["read", "write", "mcp__fs__write_file"]));
      expect(byName.mcp__fs__read_text_file?.annotations).toMatchObject({ readOnlyHint: true });
      expect(byName.mcp__fs__write_file?.inputSchema).toMatchObject({
        type: "object",
        required: ["path", "content"],
      });

      const allowed = await client.callTool({
        name: "mcp__fs__write_file",
        arguments: { path: "notes/a.txt", content: "hi" },
      });
      expect(allowed.isError).toBe(false);
      expect(decisionOf(allowed)).toMatchObject({ decision: "allow", by: "policy:notes" });
      expect(readFileSync(join(dir, "notes/a.txt"), "utf8")).toBe("hi");

      const denied = await client.callTool({
        name: "mcp__fs__write_file",
        arguments: { path: "secrets/k.txt", content: "x" },
      });
      expect(denied.isError).toBe(true);
      expect(decisionOf(denied)).toMatchObject({ decision: "deny", by: "policy:secrets" });
      expect(textOf(denied)).toContain("secrets stay put");
      expect(existsSync(join(dir, "secrets/k.txt"))).toBe(false);

      // No rule: risk "write" asks, and a server on stdio has no terminal to ask on.
      const asked = await client.callTool({
        name: "mcp__fs__write_file",
        arguments: { path: "other.txt", content: "x" },
      });
      expect(asked.isError).toBe(true);
      expect(decisionOf(asked)).toMatchObject({
        decision: "deny",
        by: "permissions",
        askedBy: "harness:default",
      });
      expect(textOf(asked)).toMatch(/no terminal/);
      expect(existsSync(join(dir, "other.txt"))).toBe(false);

      const read = await client.callTool({ name: "read", arguments: { path: "creds.txt" } });
      expect(textOf(read)).toContain("[redacted:github-token]");
      expect(textOf(read)).not.toContain(TOKEN);

      const unknown = await client.callTool({ name: "nope", arguments: {} });
      expect(unknown.isError).toBe(true);
    } finally {
      await client.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(() => process.kill(pid, 0)).toThrow();
    // The upstream MCP server went with it.
    expect(() => process.kill(upstream[0] as number, 0)).toThrow();
    const session = /session ([0-9a-f-]{36})/.exec(stderr())?.[1];
    expect(session, stderr()).toBeDefined();
    // Each call's run stops once the call is answered: no closing model turn, and the
    // run's start record says so, so the replay below asks for no reply the record lacks.
    const stored = readFileSync(join(dir, ".rein/sessions", readSessionFile(dir, session as string)), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const starts = stored.filter((entry) => entry.type === "journal" && entry.event === "run_start");
    expect(starts).toHaveLength(4);
    for (const start of starts) expect(start.stopAfterTools).toBe(true);
    const replies = stored.flatMap((entry) =>
      entry.type === "message" && (entry.message as { role: string }).role === "assistant"
        ? [(entry.message as { content: { type: string }[] }).content.map((block) => block.type)]
        : [],
    );
    expect(replies).toEqual([["toolCall"], ["toolCall"], ["toolCall"], ["toolCall"]]);
    const replay = await rein(["replay", "--json", session as string], dir);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stderr).not.toContain("went on past");
    const lines = replay.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { tool: string; recorded: string; now: string; by: string });
    expect(lines.map((line) => [line.tool, line.recorded, line.now])).toEqual(
      [
        ["mcp__fs__write_file", "allow", "allow"],
        ["mcp__fs__write_file", "deny", "deny"],
        ["mcp__fs__write_file", "ask", "ask"],
        ["read", "allow", "allow"],
        ["nope", "unknown", "deny"],
      ].filter((line) => line[0] !== "nope"),
    );
    expect(
      readFileSync(join(dir, ".rein/sessions", `${readSessionFile(dir, session as string)}`), "utf8"),
    ).not.toContain(TOKEN);
  });

  it("a SIGKILL right after the answers loses no decided call: each is in the session with who decided and why", async () => {
    const dir = newProject();
    const { client, transport, stderr } = await stdioClient(dir);
    const pid = transport.pid as number;
    let upstream: number[] = [];
    try {
      await client.listTools();
      upstream = childrenOf(pid, "server-filesystem");
      const allowed = await client.callTool({
        name: "mcp__fs__write_file",
        arguments: { path: "notes/kill.txt", content: "before the kill" },
      });
      expect(allowed.isError).toBe(false);
      const denied = await client.callTool({
        name: "mcp__fs__write_file",
        arguments: { path: "secrets/kill.txt", content: "x" },
      });
      expect(denied.isError).toBe(true);
      // Killed the moment the last answer arrived: no settle, no close, no final fsync.
      process.kill(pid, "SIGKILL");
    } finally {
      for (const child of upstream) {
        try {
          process.kill(child, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await client.close().catch(() => undefined);
    }
    const session = /session ([0-9a-f-]{36})/.exec(stderr())?.[1];
    expect(session, stderr()).toBeDefined();
    const replay = await rein(["replay", "--json", session as string], dir);
    expect(replay.code, replay.stderr).toBe(0);
    const lines = replay.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { tool: string; recorded: string; now: string; by: string });
    expect(lines.map((line) => [line.tool, line.recorded, line.now])).toEqual([
      ["mcp__fs__write_file", "allow", "allow"],
      ["mcp__fs__write_file", "deny", "deny"],
    ]);
    const recorded = readFileSync(
      join(dir, ".rein/sessions", readSessionFile(dir, session as string)),
      "utf8",
    );
    const results = recorded
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; message?: Record<string, unknown> })
      .filter((entry) => entry.type === "message" && entry.message?.role === "toolResult")
      .map(
        (entry) =>
          entry.message as {
            isError?: boolean;
            decision?: { decision: string; by?: string; reason?: string };
          },
      );
    expect(results.map((result) => result.isError === true)).toEqual([false, true]);
    expect(results[1]?.decision).toMatchObject({
      decision: "deny",
      reason: expect.stringContaining("secrets stay put (mcp__fs__write_file(secrets/**) matched"),
    });
    expect(results[1]?.decision?.by).toEqual(expect.any(String));
    expect(readFileSync(join(dir, "notes/kill.txt"), "utf8")).toBe("before the kill");
  });

  it("hides tools the gates deny outright when mcpServe.hideDenied is set, and still denies them by name", async () => {
    const dir = newProject("mcpServe: { hideDenied: true },");
    const { client } = await stdioClient(dir);
    try {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      expect(names).not.toContain("mcp__fs__move_file");
      expect(names).toContain("mcp__fs__write_file");
      const moved = await client.callTool({
        name: "mcp__fs__move_file",
        arguments: { source: "creds.txt", destination: "c.txt" },
      });
      expect(decisionOf(moved)).toMatchObject({ decision: "deny", by: "policy:no-moves" });
      expect(existsSync(join(dir, "creds.txt"))).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("guard's session budget counts across calls: once spent, calls are refused before any gate; audit logs each decision", async () => {
    const dir = newProject("", "[guard, { perSession: { maxToolCalls: 2 } }], audit,");
    const { client } = await stdioClient(dir);
    const results: unknown[] = [];
    try {
      for (const name of ["1", "2", "3"]) {
        results.push(
          await client.callTool({
            name: "mcp__fs__write_file",
            arguments: { path: `notes/${name}.txt`, content: name },
          }),
        );
      }
      results.push(await client.callTool({ name: "read", arguments: { path: "creds.txt" } }));
    } finally {
      await client.close();
    }
    const [first, second, third, fourth] = results;
    expect(decisionOf(first)).toMatchObject({ decision: "allow" });
    expect(decisionOf(second)).toMatchObject({ decision: "allow" });
    for (const refused of [third, fourth]) {
      expect((refused as { isError: boolean }).isError).toBe(true);
      expect((refused as { _meta: Record<string, unknown> })._meta["rein/status"]).toBe("blocked");
      expect(textOf(refused)).toMatch(/session budget exhausted: 2 of max 2 tool calls/);
    }
    expect(existsSync(join(dir, "notes/2.txt"))).toBe(true);
    expect(existsSync(join(dir, "notes/3.txt"))).toBe(false);
    const audited = readFileSync(join(dir, ".rein/audit.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { tool: string; decision: string });
    expect(audited.map((line) => [line.tool, line.decision])).toEqual([
      ["mcp__fs__write_file", "allow"],
      ["mcp__fs__write_file", "allow"],
    ]);
  });

  it("runs a client's call exactly once, even when a plugin queues a follow-up message after it", async () => {
    const dir = project({
      "rein.config.ts": `import { defineConfig, definePlugin, defineTool, Type } from "@rein/sdk";
import { appendFileSync } from "node:fs";

const counter = definePlugin({
  name: "counter",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "count",
      description: "appends a line to count.txt",
      parameters: Type.Object({}),
      risk: "read",
      execute: () => {
        appendFileSync("count.txt", "x\\n");
        return { content: [{ type: "text", text: "counted" }] };
      },
    }));
    rein.hooks.toolResult.tap("counter", (result, context) => {
      context.queues.followUp("a note from a plugin");
      return result;
    });
  },
});

export default defineConfig({ plugins: [counter] });
`,
    });
    const { client } = await stdioClient(dir);
    try {
      const result = await client.callTool({ name: "count", arguments: {} });
      expect(textOf(result)).toBe("counted");
      const again = await client.callTool({ name: "count", arguments: {} });
      expect(textOf(again)).toBe("counted");
    } finally {
      await client.close();
    }
    expect(readFileSync(join(dir, "count.txt"), "utf8")).toBe("x\nx\n");
  });

  it.each(ERAS.flatMap((era) => (["stdio", "http"] as const).map((over) => ({ ...era, over }))))(
    "tells a $era client ($version) over $over when an upstream server's tool list changes",
    async ({ version, options, over }) => {
      const fixture = join(repo, "packages/plugins/tools-mcp/test/fixtures/changing-server.mjs");
      const dir = project({
        "rein.config.ts": `import { defineConfig } from "@rein/sdk";
import mcp from ${JSON.stringify(dist("tools-mcp"))};
export default defineConfig({
  plugins: [[mcp, { servers: { fx: { command: process.execPath, args: [${JSON.stringify(fixture)}] } } }]],
});
`,
      });
      let changed = 0;
      const withHandler: ClientOptions = {
        ...options,
        listChanged: {
          tools: {
            autoRefresh: false,
            debounceMs: 0,
            onChanged: () => {
              changed++;
            },
          },
        },
      };
      const http = over === "http" ? await startHttp(dir) : undefined;
      let client: Client;
      if (http) {
        client = new Client({ name: "rein-test", version: "1.0.0" }, withHandler);
        await client.connect(
          new StreamableHTTPClientTransport(http.url, {
            requestInit: { headers: { authorization: "Bearer test-token-123" } },
          }),
        );
      } else {
        client = (await stdioClient(dir, withHandler)).client;
      }
      try {
        expect(client.getNegotiatedProtocolVersion()).toBe(version);
        const before = (await client.listTools()).tools.map((tool) => tool.name);
        expect(before).not.toContain("mcp__fx__extra");
        const added = await client.callTool({ name: "mcp__fx__add_extra", arguments: {} });
        expect(added.isError).toBe(false);
        const started = Date.now();
        while (changed === 0 && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 25));
        expect(changed).toBeGreaterThan(0);
        const after = (await client.listTools()).tools.map((tool) => tool.name);
        expect(after).toContain("mcp__fx__extra");
        expect(textOf(await client.callTool({ name: "mcp__fx__extra", arguments: {} }))).toBe("extra ran");
      } finally {
        await client.close();
        if (http) expect(await http.stop()).toBe(0);
      }
    },
  );

  it("rein tools and rein doctor list MCP servers, their tools and risks, and why one failed", async () => {
    const dir = project({
      "rein.config.ts": `import { defineConfig } from "@rein/sdk";
import mcp from ${JSON.stringify(dist("tools-mcp"))};
export default defineConfig({
  model: { script: [] },
  plugins: [[mcp, { servers: {
    fs: { command: process.execPath, args: [${JSON.stringify(fsServerScript)}, "."] },
    broken: { command: process.execPath, args: ["-e", "console.error('cannot find config.json'); process.exit(2)"] },
  } }]],
});
`,
    });
    const tools = await rein(["tools"], dir);
    expect(tools.code).toBe(0);
    expect(tools.stdout).toMatch(/mcp__fs__write_file {2}active {2}risk write {2}from @rein\/tools-mcp/);
    expect(tools.stdout).toMatch(/✓ fs: ready, 14 tools \(read 10, write 4\), MCP 2025-11-25 - stdio /);
    expect(tools.stdout).toMatch(
      /✗ broken: failed, 0 tools[\s\S]*exited with code 2; stderr: cannot find config.json/,
    );
    const doctor = await rein(["doctor"], dir);
    expect(doctor.code).toBe(2);
    expect(doctor.stdout).toMatch(/✓ mcp +fs: ready/);
    expect(doctor.stdout).toMatch(/✗ mcp +broken: failed[\s\S]*cannot find config.json/);
  });

  it("an upstream read tool without declared paths never returns .env past read(.env), whatever the spelling", async () => {
    const dir = newProject();
    symlinkSync(join(dir, ".env"), join(dir, "settings"));
    const { client, stderr } = await stdioClient(dir);
    const spellings = [
      ".env",
      "./.env",
      join(dir, ".env"),
      "settings",
      `notes/../.env`,
      pathToFileURL(join(dir, ".env")).href,
    ];
    try {
      for (const path of spellings) {
        const result = await client.callTool({ name: "mcp__fs__read_text_file", arguments: { path } });
        expect({ path, isError: result.isError }).toEqual({ path, isError: true });
        expect(decisionOf(result)).toMatchObject({ decision: "deny", by: "policy:env" });
        expect(textOf(result)).not.toContain("hunter2");
      }
      const many = await client.callTool({
        name: "mcp__fs__read_multiple_files",
        arguments: { paths: ["creds.txt", "settings"] },
      });
      expect(many.isError).toBe(true);
      expect(textOf(many)).not.toContain("hunter2");
    } finally {
      await client.close();
    }
    const session = /session ([0-9a-f-]{36})/.exec(stderr())?.[1] as string;
    const recorded = readFileSync(join(dir, ".rein/sessions", readSessionFile(dir, session)), "utf8");
    expect(recorded).not.toContain("hunter2");
  });

  it.each(ERAS)(
    "serves a $era client ($version) over Streamable HTTP on 127.0.0.1 only with the bearer token",
    async ({ version, options }) => {
      const dir = newProject();
      const http = await startHttp(dir);
      try {
        expect(http.url.hostname).toBe("127.0.0.1");
        expect(http.stderr()).not.toContain("test-token-123");
        const anonymous = await fetch(http.url, {
          method: "POST",
          body: "{}",
          headers: { "content-type": "application/json" },
        });
        expect(anonymous.status).toBe(401);
        const wrong = await fetch(http.url, {
          method: "POST",
          body: "{}",
          headers: { authorization: "Bearer nope" },
        });
        expect(wrong.status).toBe(401);

        const client = new Client({ name: "rein-test", version: "1.0.0" }, options);
        await client.connect(
          new StreamableHTTPClientTransport(http.url, {
            requestInit: { headers: { authorization: "Bearer test-token-123" } },
          }),
        );
        expect(client.getNegotiatedProtocolVersion()).toBe(version);
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names).toContain("mcp__fs__write_file");
        const denied = await client.callTool({
          name: "mcp__fs__write_file",
          arguments: { path: "secrets/k.txt", content: "x" },
        });
        expect(decisionOf(denied)).toMatchObject({ decision: "deny", by: "policy:secrets" });
        const allowed = await client.callTool({
          name: "mcp__fs__write_file",
          arguments: { path: `notes/${version}.txt`, content: "via http" },
        });
        expect(allowed.isError).toBe(false);
        expect(readFileSync(join(dir, `notes/${version}.txt`), "utf8")).toBe("via http");
        await client.close();
      } finally {
        expect(await http.stop()).toBe(0);
      }
    },
  );

  it("answers a 2025-era session's tools/call as one JSON body with its length (no SSE stream), redacted", async () => {
    const dir = newProject();
    const http = await startHttp(dir);
    try {
      const post = (body: unknown, session?: string) =>
        fetch(http.url, {
          method: "POST",
          body: JSON.stringify(body),
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            authorization: "Bearer test-token-123",
            "mcp-protocol-version": "2025-11-25",
            ...(session ? { "mcp-session-id": session } : {}),
          },
        });
      const init = await post({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      });
      expect(init.status).toBe(200);
      const session = init.headers.get("mcp-session-id") as string;
      expect(session).toBeTruthy();
      await init.text();
      const initialized = await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
      expect(initialized.status).toBe(202);
      await initialized.text();
      const call = await post(
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "read", arguments: { path: "creds.txt" } },
        },
        session,
      );
      expect(call.status).toBe(200);
      expect(call.headers.get("content-type")).toMatch(/^application\/json/);
      const text = await call.text();
      expect(call.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
      const answer = JSON.parse(text) as {
        id: number;
        result: { content: { text: string }[]; isError: boolean };
      };
      expect(answer.id).toBe(2);
      expect(answer.result.isError).toBe(false);
      expect(answer.result.content[0]?.text).toContain("[redacted:github-token]");
      expect(text).not.toContain(TOKEN);
    } finally {
      expect(await http.stop()).toBe(0);
    }
  });

  it("checks Origin before anything else: foreign origins get 403, loopback and listed ones pass", async () => {
    const dir = newProject();
    const http = await startHttp(dir, ["--allow-origin", "https://app.example.com/"]);
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "browser", version: "1" },
      },
    });
    const post = (headers: Record<string, string>) =>
      fetch(http.url, {
        method: "POST",
        body: initialize,
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer test-token-123",
          ...headers,
        },
      });
    const table: { origin?: string; status: number; cors: boolean; headers?: Record<string, string> }[] = [
      { status: 200, cors: false }, // a non-browser client sends no Origin
      { origin: "http://localhost:5173", status: 200, cors: true },
      { origin: "http://127.0.0.1:9", status: 200, cors: true },
      { origin: "http://[::1]:8080", status: 200, cors: true },
      { origin: "https://app.example.com", status: 200, cors: true }, // listed
      { origin: "https://evil.example", status: 403, cors: false },
      { origin: "http://localhost.evil.example", status: 403, cors: false },
      { origin: "https://app.example.com.evil.example", status: 403, cors: false },
      { origin: "http://app.example.com", status: 403, cors: false }, // listed with https only
      { origin: "https://app.example.com:8443", status: 403, cors: false }, // another port
      { origin: "https://app.example.com/path", status: 403, cors: false },
      { origin: "https://user@app.example.com", status: 403, cors: false },
      { origin: "null", status: 403, cors: false }, // opaque origin (sandboxed iframe, file:)
      { origin: "", status: 403, cors: false },
      { origin: "file://", status: 403, cors: false },
      { origin: "chrome-extension://abcdef", status: 403, cors: false },
      // Refused before the token is even looked at.
      { origin: "https://evil.example", status: 403, cors: false, headers: { authorization: "Bearer nope" } },
    ];
    try {
      for (const row of table) {
        const response = await post({
          ...(row.origin !== undefined ? { origin: row.origin } : {}),
          ...(row.headers ?? {}),
        });
        const seen = {
          origin: row.origin,
          status: response.status,
          cors: response.headers.has("access-control-allow-origin"),
        };
        expect(seen).toEqual({ origin: row.origin, status: row.status, cors: row.cors });
        if (row.status === 403) expect(await response.text()).toMatch(/origin .* is not allowed/);
        else await response.body?.cancel();
      }
      // A body over 4 MiB is refused with 413, not read.
      const huge = await fetch(http.url, {
        method: "POST",
        body: `{"x":"${"a".repeat(5 * 1024 * 1024)}"}`,
        headers: { "content-type": "application/json", authorization: "Bearer test-token-123" },
      });
      expect(huge.status).toBe(413);
      // A preflight carries no token: answered for an allowed origin, refused for a foreign one.
      const preflight = (origin: string) =>
        fetch(http.url, {
          method: "OPTIONS",
          headers: {
            origin,
            "access-control-request-method": "POST",
            "access-control-request-headers": "authorization",
          },
        });
      const ok = await preflight("https://app.example.com");
      expect(ok.status).toBe(204);
      expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
      expect(ok.headers.get("access-control-allow-headers")).toContain("authorization");
      expect((await preflight("https://evil.example")).status).toBe(403);
      // DNS rebinding: a Host that is not this listener (fetch sets Host itself, so node:http).
      const rebound = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(
          http.url,
          {
            method: "POST",
            headers: {
              host: `evil.example:${http.url.port}`,
              authorization: "Bearer test-token-123",
              "content-type": "application/json",
            },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.on("error", reject);
        req.end(initialize);
      });
      expect(rebound).toBe(403);

      // A real client from a foreign origin, either era, never gets a session or a call.
      for (const { options } of ERAS) {
        const client = new Client({ name: "rebound", version: "1.0.0" }, options);
        await expect(
          client.connect(
            new StreamableHTTPClientTransport(http.url, {
              requestInit: {
                headers: { authorization: "Bearer test-token-123", origin: "https://evil.example" },
              },
            }),
          ),
        ).rejects.toMatchObject({ status: 403 });
      }
    } finally {
      expect(await http.stop()).toBe(0);
    }
  });

  it("refuses a malformed --allow-origin or mcpServe.allowedOrigins, naming it", async () => {
    const dir = newProject();
    const flag = await rein(["mcp", "serve", "--http", "0", "--allow-origin", "app.example.com"], dir);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--allow-origin: "app.example.com" is not an origin/);
    const configured = newProject(
      `mcpServe: { allowedOrigins: ["https://ok.example", "https://x.example/path"] },`,
    );
    const fromConfig = await rein(["mcp", "serve", "--http", "0"], configured);
    expect(fromConfig.code).toBe(2);
    expect(fromConfig.stderr).toMatch(
      /mcpServe.allowedOrigins\[1\]: "https:\/\/x.example\/path" is not an origin/,
    );
  });
});

/** `rein mcp serve --http 0` in `dir` with the test token; resolves once it listens. */
async function startHttp(dir: string, args: string[] = []) {
  const child = spawnRein(["mcp", "serve", "--http", "0", ...args], dir, {
    REIN_MCP_TOKEN: "test-token-123",
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  const started = Date.now();
  while (!/listening on (\S+)/.test(stderr)) {
    if (Date.now() - started > 60_000 || child.exitCode !== null) throw new Error(`no listener: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL((/listening on (\S+)/.exec(stderr) as RegExpExecArray)[1] as string);
  return {
    url,
    stderr: () => stderr,
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

function readSessionFile(dir: string, id: string): string {
  return readdirSync(join(dir, ".rein/sessions")).find((name) => name.includes(id)) as string;
}

/** Live children of `parent` whose command line contains `needle`. */
function childrenOf(parent: number, needle: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== parent || fields[0] === "Z") continue;
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(needle)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}
