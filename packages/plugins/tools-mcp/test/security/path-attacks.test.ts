/**
 * Path arguments of MCP tools get the shared canonical resolution (option `paths`):
 * attacks through @modelcontextprotocol/server-filesystem, which is started with
 * access to a directory OUTSIDE Rein's root as well, so every refusal below is
 * Rein's (the server itself would have done it). Proof is on the server side: the
 * file outside is not written or read, the protected file keeps its content.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import policy from "@rein/plugin-policy";
import { protectedFiles } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import mcp from "../../src/index.js";
import { guardPaths } from "../../src/paths.js";
import { everythingServer, serverScript, tempDir } from "../helpers.js";

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

const SECRET = "outside-secret-7f3a";

/** A root with notes, Rein's state and config, symlinks out of it; and a directory outside. */
function world() {
  const root = tempDir();
  const outside = tempDir();
  mkdirSync(join(root, "notes"));
  mkdirSync(join(root, "secrets"));
  mkdirSync(join(root, ".rein"));
  mkdirSync(join(root, "plugins"));
  writeFileSync(join(root, "notes", "a.txt"), "note a");
  writeFileSync(join(root, "secrets", "key.txt"), "inside-key");
  writeFileSync(join(root, "rein.config.ts"), "export default {};\n");
  writeFileSync(join(root, "plugins", "mine.ts"), "export default {};\n");
  writeFileSync(join(outside, "secret.txt"), SECRET);
  symlinkSync(outside, join(root, "link-out"));
  symlinkSync(join(root, "rein.config.ts"), join(root, "cfg-link"));
  symlinkSync(join(root, "secrets", "key.txt"), join(root, "innocent.txt"));
  return { root, outside };
}

const PATHS = {
  "*": ["path"],
  read_multiple_files: ["paths"],
  move_file: ["source", "destination"],
  list_directory: { path: "walk" },
};

async function harnessFor(
  root: string,
  outside: string,
  calls: { name: string; args: Record<string, unknown> }[],
) {
  const harness = await createTestHarness({
    plugins: [
      [
        mcp,
        {
          servers: {
            fs: {
              command: process.execPath,
              // The server may touch `outside` too: only Rein stands in the way.
              args: [serverScript("server-filesystem"), root, outside],
              cwd: root,
              paths: PATHS,
            },
          },
        },
      ],
      [
        policy,
        {
          rules: [
            { id: "secrets", rule: "read(secrets/**)", decision: "deny", reason: "secrets stay put" },
            { id: "fs", rule: "mcp__fs__*", decision: "allow" },
          ],
        },
      ],
    ],
    config: { cwd: root },
    script: [{ toolCalls: calls }, "done"],
  });
  protectedFiles(harness.harness).add("rein", [join(root, "plugins", "mine.ts")]);
  return harness;
}

const results = (harness: TestHarness) =>
  harness.messages().filter((message) => message.role === "toolResult") as unknown as {
    isError: boolean;
    content: { type: string; text?: string }[];
  }[];
const text = (result: { content: { text?: string }[] }) =>
  result.content.map((block) => block.text ?? "").join("\n");

describe("MCP path arguments: attacks refused before the server is called", () => {
  type Row = [
    label: string,
    call: (w: { root: string; outside: string }) => { name: string; args: Record<string, unknown> },
    proof: (w: { root: string; outside: string }) => void,
  ];
  const ROWS: Row[] = [
    [
      "traversal out of the root (write)",
      ({ outside }) => ({
        name: "mcp__fs__write_file",
        args: { path: `../${basename(outside)}/pwned.txt`, content: "x" },
      }),
      ({ outside }) => expect(existsSync(join(outside, "pwned.txt"))).toBe(false),
    ],
    [
      "an absolute path outside the root (write)",
      ({ outside }) => ({
        name: "mcp__fs__write_file",
        args: { path: join(outside, "pwned.txt"), content: "x" },
      }),
      ({ outside }) => expect(existsSync(join(outside, "pwned.txt"))).toBe(false),
    ],
    [
      "a symlink out of the root (write)",
      () => ({ name: "mcp__fs__write_file", args: { path: "link-out/pwned.txt", content: "x" } }),
      ({ outside }) => expect(existsSync(join(outside, "pwned.txt"))).toBe(false),
    ],
    [
      "a symlink out of the root (read)",
      () => ({ name: "mcp__fs__read_text_file", args: { path: "link-out/secret.txt" } }),
      () => undefined,
    ],
    [
      "one element of a path array out of the root",
      () => ({
        name: "mcp__fs__read_multiple_files",
        args: { paths: ["notes/a.txt", "link-out/secret.txt"] },
      }),
      () => undefined,
    ],
    [
      "a move whose destination escapes",
      () => ({
        name: "mcp__fs__move_file",
        args: { source: "notes/a.txt", destination: "link-out/moved.txt" },
      }),
      ({ root, outside }) => {
        expect(existsSync(join(root, "notes", "a.txt"))).toBe(true);
        expect(existsSync(join(outside, "moved.txt"))).toBe(false);
      },
    ],
    [
      "a write to Rein's state (.rein/)",
      () => ({ name: "mcp__fs__write_file", args: { path: ".rein/grants.json", content: "{}" } }),
      ({ root }) => expect(existsSync(join(root, ".rein", "grants.json"))).toBe(false),
    ],
    [
      "a write to the config through a symlink",
      () => ({ name: "mcp__fs__write_file", args: { path: "cfg-link", content: "pwned" } }),
      ({ root }) => expect(readFileSync(join(root, "rein.config.ts"), "utf8")).toBe("export default {};\n"),
    ],
    [
      "a write to a plugin file the host protects",
      () => ({ name: "mcp__fs__write_file", args: { path: "plugins/./mine.ts", content: "pwned" } }),
      ({ root }) =>
        expect(readFileSync(join(root, "plugins", "mine.ts"), "utf8")).toBe("export default {};\n"),
    ],
  ];

  it.each(ROWS)("%s", async (_label, call, proof) => {
    const w = world();
    t = await harnessFor(w.root, w.outside, [call(w)]);
    await t.prompt("go");
    const [result] = results(t);
    expect(result?.isError).toBe(true);
    expect(text(result as never)).not.toContain(SECRET);
    expect(text(result as never)).toMatch(/was not called/);
    proof(w);
  });

  it("a read-only tool may read a protected file; an allowed write inside the root reaches the server", async () => {
    const w = world();
    t = await harnessFor(w.root, w.outside, [
      { name: "mcp__fs__read_text_file", args: { path: "cfg-link" } },
      { name: "mcp__fs__write_file", args: { path: "notes/b.txt", content: "written" } },
    ]);
    await t.prompt("go");
    const [read, write] = results(t);
    expect(read?.isError).toBe(false);
    expect(text(read as never)).toContain("export default {};");
    expect(write?.isError).toBe(false);
    expect(readFileSync(join(w.root, "notes", "b.txt"), "utf8")).toBe("written");
  });

  it("policy path rules see the canonical path: a symlink to secrets/ is denied by read(secrets/**), in arrays too", async () => {
    const w = world();
    t = await harnessFor(w.root, w.outside, [
      { name: "mcp__fs__read_text_file", args: { path: "innocent.txt" } },
      { name: "mcp__fs__read_multiple_files", args: { paths: ["notes/a.txt", "innocent.txt"] } },
      { name: "mcp__fs__list_directory", args: { path: "notes/../secrets" } },
    ]);
    await t.prompt("go");
    const decisions = t.decisions();
    expect(decisions.map((d) => [d.decision, d.by])).toEqual([
      ["deny", "policy:secrets"],
      ["deny", "policy:secrets"],
      ["deny", "policy:secrets"],
    ]);
    for (const result of results(t)) expect(text(result)).not.toContain("inside-key");
  });

  it("facts.paths is filled like a built-in tool's: canonical, one per array element", async () => {
    const w = world();
    t = await harnessFor(w.root, w.outside, []);
    const single = await t.checkToolCall({ name: "mcp__fs__read_text_file", args: { path: "innocent.txt" } });
    expect(single.facts.paths).toEqual([
      {
        arg: "path",
        kind: "file",
        input: "innocent.txt",
        absolute: join(w.root, "secrets", "key.txt"),
        relative: "secrets/key.txt",
        inside: true,
        lexical: join(w.root, "innocent.txt"),
        root: w.root,
      },
    ]);
    const many = await t.checkToolCall({
      name: "mcp__fs__read_multiple_files",
      args: { paths: ["notes/a.txt", "link-out/secret.txt"] },
    });
    expect(many.facts.paths?.map((fact) => [fact.arg, fact.relative, fact.inside])).toEqual([
      ["paths", "notes/a.txt", true],
      ["paths", `../${basename(w.outside)}/secret.txt`, false],
    ]);
    const walk = await t.checkToolCall({ name: "mcp__fs__list_directory", args: { path: "." } });
    expect(walk.facts.paths?.[0]).toMatchObject({ arg: "path", kind: "walk", relative: "." });
  });
});

describe("MCP path arguments: the server gets the canonical path the gates saw", () => {
  it("sends the resolved absolute path, not the model's spelling", async () => {
    const root = tempDir();
    mkdirSync(join(root, "notes"));
    symlinkSync(join(root, "notes"), join(root, "alias"));
    t = await createTestHarness({
      plugins: [
        [mcp, { servers: { every: { ...everythingServer(), cwd: root, paths: { echo: ["message"] } } } }],
      ],
      config: { cwd: root },
      script: [
        { toolCalls: [{ name: "mcp__every__echo", args: { message: "alias/../alias/x.txt" } }] },
        "done",
      ],
    });
    await t.prompt("go");
    const [result] = results(t);
    expect(result?.isError).toBe(false);
    expect(text(result as never)).toContain(join(root, "notes", "x.txt"));
    expect(text(result as never)).not.toContain("alias");
  });

  it("a paths entry naming an argument the tool does not take leaves that tool out, reported", async () => {
    t = await createTestHarness({
      plugins: [
        [mcp, { servers: { every: { ...everythingServer(), paths: { echo: ["file"], "*": ["nope"] } } } }],
      ],
    });
    const names = t.harness.tools.map((tool) => tool.name);
    expect(names).not.toContain("mcp__every__echo");
    expect(names).toContain("mcp__every__get-sum");
    expect(t.logs.some((log) => /paths\.echo names "file"/.test(log.message))).toBe(true);
  });
});

describe("guardPaths without a harness (no facts): the same resolver, refusals coded", () => {
  const ROWS: [string, Record<string, unknown>][] = [
    ["traversal", { path: "../x" }],
    ["a NUL byte", { path: "a\u0000b" }],
    ["Rein's state", { path: ".rein/sessions/x" }],
    ["a non-string in an array", { paths: ["a", 3] }],
  ];
  it.each(ROWS)("%s is path_refused", (_label, args) => {
    const root = tempDir();
    let caught: unknown;
    try {
      guardPaths("fs", "write_file", args, {}, root, {
        declared: { path: "file", paths: "file" },
        root,
        writes: true,
        protectedFiles: undefined,
      });
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: "path_refused", server: "fs", tool: "write_file" });
  });
});
