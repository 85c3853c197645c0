/**
 * Fail closed without a `paths` declaration (issue 28 item 6): an MCP tool's string
 * arguments that name a path are checked by the path rules. The peer is the real
 * @modelcontextprotocol/server-filesystem, configured with no `paths` at all and
 * allowed every tool by its own rule, so only `read(.env)` stands between the model
 * and the secret. Proof: the secret is in no message and no session entry.
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import policy from "@rein/plugin-policy";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import mcp from "../../src/index.js";
import { mentionedPaths } from "../../src/path-mentions.js";
import { serverScript, tempDir } from "../helpers.js";

const SECRET = "API_KEY=sk-live-0d5f9e2b";

let t: TestHarness | undefined;
const home = process.env.HOME;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  process.env.HOME = home;
});

/** A project with a `.env`, links to it, a README; and a symlink to the project from elsewhere. */
function world() {
  const root = tempDir();
  const elsewhere = tempDir();
  writeFileSync(join(root, ".env"), `${SECRET}\n`);
  writeFileSync(join(root, "README.md"), "hello readme");
  mkdirSync(join(root, "docs"));
  symlinkSync(join(root, ".env"), join(root, "settings"));
  symlinkSync("../.env", join(root, "docs", "env-link"));
  symlinkSync(root, join(elsewhere, "alias"));
  return { root, alias: join(elsewhere, "alias") };
}

async function harnessFor(
  root: string,
  calls: { name: string; args: Record<string, unknown> }[],
  paths?: object,
) {
  return createTestHarness({
    plugins: [
      [
        mcp,
        {
          servers: {
            fs: {
              command: process.execPath,
              args: [serverScript("server-filesystem"), root],
              cwd: root,
              ...(paths ? { paths } : {}),
            },
          },
        },
      ],
      [
        policy,
        {
          rules: [
            { id: "env", rule: "read(.env)", decision: "deny", reason: ".env holds secrets" },
            { id: "fs", rule: "mcp__fs__*", decision: "allow" },
          ],
        },
      ],
    ],
    config: { cwd: root },
    script: [{ toolCalls: calls }, "done"],
  });
}

const results = (harness: TestHarness) =>
  harness.messages().filter((message) => message.role === "toolResult") as unknown as {
    isError: boolean;
    content: { type: string; text?: string }[];
  }[];
const text = (result: { content: { text?: string }[] } | undefined) =>
  (result?.content ?? []).map((block) => block.text ?? "").join("\n");

describe("an MCP read tool without declared paths never returns .env past read(.env)", () => {
  type Row = [
    label: string,
    call: (w: { root: string; alias: string }) => { name: string; args: Record<string, unknown> },
  ];
  const ROWS: Row[] = [
    ["relative", () => ({ name: "mcp__fs__read_text_file", args: { path: ".env" } })],
    ["./-relative", () => ({ name: "mcp__fs__read_text_file", args: { path: "./.env" } })],
    ["through ..", () => ({ name: "mcp__fs__read_text_file", args: { path: "docs/../.env" } })],
    ["absolute", ({ root }) => ({ name: "mcp__fs__read_text_file", args: { path: join(root, ".env") } })],
    [
      "absolute through a symlinked directory",
      ({ alias }) => ({ name: "mcp__fs__read_text_file", args: { path: join(alias, ".env") } }),
    ],
    [
      "a symlink with an innocent name",
      () => ({ name: "mcp__fs__read_text_file", args: { path: "settings" } }),
    ],
    [
      "a relative symlink in a folder",
      () => ({ name: "mcp__fs__read_text_file", args: { path: "docs/env-link" } }),
    ],
    [
      "a file: URI",
      ({ root }) => ({
        name: "mcp__fs__read_text_file",
        args: { path: pathToFileURL(join(root, ".env")).href },
      }),
    ],
    ["padded with spaces", () => ({ name: "mcp__fs__read_text_file", args: { path: " .env " } })],
    ["the deprecated read_file", () => ({ name: "mcp__fs__read_file", args: { path: ".env" } })],
    ["read_media_file", () => ({ name: "mcp__fs__read_media_file", args: { path: ".env" } })],
    [
      "hidden in an array of paths",
      () => ({ name: "mcp__fs__read_multiple_files", args: { paths: ["README.md", "settings"] } }),
    ],
  ];

  it.each(ROWS)("%s", async (_label, call) => {
    const w = world();
    t = await harnessFor(w.root, [call(w)]);
    await t.prompt("read it");
    const [result] = results(t);
    expect(result?.isError).toBe(true);
    expect(text(result)).toMatch(/\.env holds secrets/);
    expect(JSON.stringify(t.messages())).not.toContain("sk-live");
    expect(JSON.stringify(t.session.entries())).not.toContain("sk-live");
  });

  it("~ spellings resolve against the home directory", async () => {
    const w = world();
    process.env.HOME = w.root; // the server expands ~ too; both see the project as home
    t = await harnessFor(w.root, [{ name: "mcp__fs__read_text_file", args: { path: "~/.env" } }]);
    await t.prompt("read it");
    const [result] = results(t);
    expect(result?.isError).toBe(true);
    expect(JSON.stringify(t.session.entries())).not.toContain("sk-live");
  });

  it("other files still read (the default does not block what no rule names)", async () => {
    const w = world();
    t = await harnessFor(w.root, [
      { name: "mcp__fs__read_text_file", args: { path: "README.md" } },
      { name: "mcp__fs__read_multiple_files", args: { paths: ["README.md", "docs/../README.md"] } },
    ]);
    await t.prompt("read it");
    const [one, many] = results(t);
    expect(one?.isError).toBe(false);
    expect(text(one)).toContain("hello readme");
    expect(many?.isError).toBe(false);
  });

  it("declaring paths narrows the check to the declared arguments", async () => {
    const w = world();
    const write = { name: "mcp__fs__write_file", args: { path: "notes.txt", content: ".env" } };
    // Undeclared: the content names the existing .env, so the call is refused (fail closed).
    t = await harnessFor(w.root, [write]);
    await t.prompt("write");
    expect(results(t)[0]?.isError).toBe(true);
    expect(text(results(t)[0])).toMatch(/\.env holds secrets/);
    await t.dispose();
    // Declared: only `path` is a path; the content is just text.
    t = await harnessFor(w.root, [write], { write_file: ["path"] });
    await t.prompt("write");
    expect(results(t)[0]?.isError).toBe(false);
  });

  it("a tool that may write never gets Rein's own files named in its arguments", async () => {
    const w = world();
    t = await harnessFor(w.root, [
      { name: "mcp__fs__write_file", args: { path: "rein.config.ts", content: "export default {}" } },
    ]);
    await t.prompt("write");
    const [result] = results(t);
    expect(result?.isError).toBe(true);
    expect(text(result)).toMatch(/protected/);
  });
});

describe("what names a path (mentionedPaths)", () => {
  let root: string;
  beforeEach(() => {
    root = world().root;
  });
  const found = (args: Record<string, unknown>) =>
    mentionedPaths(args, { cwd: root, root: undefined }).map((fact) => [fact.arg, fact.relative]);

  it.each([
    ["an absolute path", { p: "/etc/passwd" }, [["p", "<abs>/etc/passwd"]]],
    ["a new file name with a dot", { p: "rein.config.ts" }, [["p", "rein.config.ts"]]],
    ["a dotfile that exists", { p: ".env" }, [["p", ".env"]]],
    ["a dotfile that does not exist yet", { p: ".npmrc" }, [["p", ".npmrc"]]],
    ["a relative path with a slash, missing", { p: "new/file.txt" }, [["p", "new/file.txt"]]],
    ["an existing bare name (a symlink)", { p: "settings" }, [["p", ".env"]]],
    ["nested in objects and arrays", { files: [{ path: "./README.md" }] }, [["files[0].path", "README.md"]]],
    ["a bare word that names nothing", { p: "hello" }, []],
    ["an https URL", { p: "https://example.com/a/b" }, []],
    ["a file URI of another host", { p: "file://server/share/x" }, []],
    ["text with a line break", { p: ".env\nmore" }, []],
    ["a number and a boolean", { n: 3, b: true }, []],
  ])("%s", (_label, args, expected) => {
    // `<abs>/...`: an absolute path, relative to the project root as the resolver spells it.
    const wanted = expected.map(([arg, rel]) => [
      arg,
      rel?.startsWith("<abs>/") ? relative(root, rel.slice(5)) : rel,
    ]);
    expect(found(args)).toEqual(wanted);
  });

  it("refuses a call with more strings than it inspects", async () => {
    const args = { many: Array.from({ length: 1100 }, (_, i) => `s${i}`) };
    expect(() => mentionedPaths(args, { cwd: root, root: undefined })).toThrow(/more than 1024 strings/);
  });
});
