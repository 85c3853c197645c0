// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config syntax that Rein expands, not a template.
/** Pure mappings: tool names, risk from annotations, result content, ${VAR} expansion, exports. */
import { TOOL_NAME_PATTERN } from "@rein/sdk";
import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";
import {
  reinToolName,
  reinToolNames,
  resolveServer,
  riskFromAnnotations,
  toToolResult,
} from "../src/index.js";

describe("tool names follow mcp__<server>__<tool> and the harness's pattern", () => {
  it.each([
    ["fs", "read_file", "mcp__fs__read_file"],
    ["every", "get-sum", "mcp__every__get-sum"],
    ["gh", "repos.list/all", "mcp__gh__repos_list_all"],
    ["gh", "ünïcode tool", "mcp__gh___n_code_tool"],
    ["gh", "", "mcp__gh___"],
  ])("%s / %j -> %s", (server, tool, expected) => {
    expect(reinToolName(server, tool)).toBe(expected);
  });

  it("cuts long names to 64 characters with a hash, keeping distinct names distinct", () => {
    const a = reinToolName("server", `${"x".repeat(80)}_a`);
    const b = reinToolName("server", `${"x".repeat(80)}_b`);
    for (const name of [a, b]) {
      expect(name).toHaveLength(64);
      expect(name).toMatch(TOOL_NAME_PATTERN);
      expect(name.startsWith("mcp__server__xxx")).toBe(true);
    }
    expect(a).not.toBe(b);
  });

  it("two tools that sanitise to one name are a name_collision naming both", () => {
    expect(() => reinToolNames("gh", ["a.b", "a_b"])).toThrow(
      expect.objectContaining({ code: "name_collision", server: "gh", tool: "a_b" }),
    );
    expect([...reinToolNames("gh", ["a", "b"]).values()]).toEqual(["mcp__gh__a", "mcp__gh__b"]);
  });
});

describe("annotations map to the most cautious risk", () => {
  it.each([
    [undefined, "exec"],
    [{}, "exec"],
    [{ idempotentHint: true }, "exec"],
    [{ readOnlyHint: true }, "read"],
    [{ readOnlyHint: true, openWorldHint: false }, "read"],
    [{ readOnlyHint: true, openWorldHint: true }, "network"],
    [{ destructiveHint: true }, "write"],
    [{ readOnlyHint: true, destructiveHint: true }, "write"],
    [{ readOnlyHint: false, destructiveHint: false }, "write"],
    [{ readOnlyHint: false }, "write"],
    [{ openWorldHint: true, destructiveHint: true }, "network"],
  ])("%j -> %s", (annotations, risk) => {
    expect(riskFromAnnotations(annotations)).toBe(risk);
  });
});

describe("MCP results become pi-ai content, nothing dropped silently", () => {
  it("maps every content kind", () => {
    const result = toToolResult("srv", "t", {
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "file:///a.txt", mimeType: "text/plain", text: "body" } },
        { type: "resource", resource: { uri: "file:///a.png", mimeType: "image/png", blob: "iVBO" } },
        {
          type: "resource",
          resource: { uri: "file:///a.bin", mimeType: "application/zip", blob: "AAAAAAAA" },
        },
        { type: "resource_link", uri: "file:///b", name: "b", description: "the b file" },
        { type: "hologram" },
      ],
      isError: true,
    });
    expect(result.isError).toBe(true);
    expect(result.details).toEqual({ server: "srv", tool: "t" });
    expect(result.content).toEqual([
      { type: "text", text: "hello" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
      { type: "text", text: "[audio audio/wav, 3 bytes, not shown]" },
      { type: "text", text: "[resource file:///a.txt]\nbody" },
      { type: "image", data: "iVBO", mimeType: "image/png" },
      { type: "text", text: "[resource file:///a.bin (application/zip), 6 bytes of binary data, not shown]" },
      { type: "text", text: '[resource link file:///b "b": the b file]' },
      { type: "text", text: '[unsupported MCP content of type "hologram"]' },
    ]);
  });

  it("gives structuredContent as JSON when there is no content, and says when there is nothing", () => {
    expect(toToolResult("s", "t", { content: [], structuredContent: { a: 1 } }).content).toEqual([
      { type: "text", text: '{\n  "a": 1\n}' },
    ]);
    expect(toToolResult("s", "t", {}).content).toEqual([{ type: "text", text: "(no output)" }]);
  });
});

describe("server options", () => {
  const env = { PATH: "/bin", HOME: "/home/u", ANTHROPIC_API_KEY: "sk-ant-secret", GH: "tok" };
  it("a stdio server gets the safe base environment plus its expanded env, never Rein's secrets", () => {
    const spec = resolveServer("s", { command: "x", env: { A: "pre-${GH}-post" } }, { cwd: "/w" }, env);
    expect(spec.transport).toEqual({
      kind: "stdio",
      command: "x",
      args: [],
      env: { PATH: "/bin", HOME: "/home/u", A: "pre-tok-post" },
      cwd: "/w",
    });
  });

  it("http headers expand ${VAR}; an unset variable is missing_env naming it", () => {
    const spec = resolveServer(
      "h",
      { url: "https://example.test/mcp", headers: { Authorization: "Bearer ${GH}" } },
      { cwd: "/" },
      env,
    );
    expect(spec.transport).toMatchObject({ kind: "http", headers: { Authorization: "Bearer tok" } });
    expect(() =>
      resolveServer(
        "h",
        { url: "https://example.test/mcp", headers: { Authorization: "Bearer ${NOPE}" } },
        { cwd: "/" },
        env,
      ),
    ).toThrow(expect.objectContaining({ code: "missing_env", server: "h" }));
  });
});

it("names its exports one by one", () => {
  expect(Object.keys(api).sort()).toEqual(
    [
      "DEFAULT_CALL_TIMEOUT_MS",
      "DEFAULT_START_TIMEOUT_MS",
      "MCP_STATUS_ENTRY",
      "McpErrorCode",
      "McpToolError",
      "PLUGIN_NAME",
      "SERVER_NAME_PATTERN",
      "ServerConnection",
      "buildTools",
      "default",
      "isMcpToolError",
      "mcpOptionsSchema",
      "readMcpStatus",
      "reinToolName",
      "reinToolNames",
      "resolveServer",
      "riskFromAnnotations",
      "serverOptionsSchema",
      "toToolResult",
    ].sort(),
  );
});
