/**
 * Red-team table for invariants 2-4 (issue 13, classes 2-4): every spelling that
 * reaches a denied file, walks over the tree, escapes from the root, odd paths and
 * writes to Rein's own state - end to end through a harness with @rein/tools-fs
 * and @rein/plugin-policy, on a real file tree with real symlinks.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import policy from "@rein/plugin-policy";
import { type AgentMessage, definePlugin, protectedFiles } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import fsTools from "../../src/index.js";
import { tempDir, writeFiles } from "../helpers.js";

const SECRET = "sk-live-4f9a8b7c6d5e";

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

interface World {
  /** The working directory the harness runs in (maybe a symlink). */
  cwd: string;
  /** Its real location. */
  real: string;
  outside: string;
}

/** A project with a secret .env, source files, a symlink to .env, and a directory outside. */
function world(options: { symlinkedCwd?: boolean } = {}): World {
  const real = tempDir("rein-sec-proj-");
  const outside = tempDir("rein-sec-out-");
  writeFiles(real, {
    ".env": `API_KEY=${SECRET}\n`,
    "src/a.ts": "export const a = 1;\n",
    "app/.env": `APP_KEY=${SECRET}\n`,
    "app/main.ts": "main\n",
    ".rein/sessions/s1.jsonl": "{}\n",
    "rein.config.ts": "export default {};\n",
  });
  symlinkSync(".env", join(real, "env-link"));
  symlinkSync("../.env", join(real, "src/config"));
  writeFiles(outside, { "secret.txt": `OUTSIDE=${SECRET}\n` });
  // A file symlink leading out: a walk lists it by name, only the per-result check drops it.
  symlinkSync(join(outside, "secret.txt"), join(real, "src/leak.txt"));
  let cwd = real;
  if (options.symlinkedCwd) {
    const holder = tempDir("rein-sec-link-");
    cwd = join(holder, "work");
    symlinkSync(real, cwd);
  }
  return { cwd, real, outside };
}

const RULES = [
  { id: "no-env", rule: "read(**/.env)", decision: "deny" as const, reason: "secrets stay out" },
  { id: "src", rule: "write(src/**)", decision: "allow" as const, reason: "source is fair game" },
];

/** Runs one scripted tool call through a harness; returns the tool result message. */
async function attempt(
  w: World,
  name: string,
  args: Record<string, unknown>,
  fsOptions: Record<string, unknown> = {},
): Promise<{ text: string; isError: boolean; decision?: string }> {
  t = await createTestHarness({
    plugins: [
      [fsTools, fsOptions],
      [policy, { rules: RULES }],
    ],
    config: { cwd: w.cwd },
    script: [{ toolCalls: [{ name, args }] }, "done"],
  });
  await t.prompt("go");
  const result = t
    .messages()
    .find((m): m is Extract<AgentMessage, { role: "toolResult" }> => m.role === "toolResult");
  if (!result) throw new Error("no tool result");
  const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  const decision = t.decisions()[0]?.decision;
  await t.dispose();
  t = undefined;
  return {
    text,
    isError: result.isError === true,
    ...(decision ? { decision } : {}),
  };
}

type Case = [
  label: string,
  setup: { symlinkedCwd?: boolean; fs?: Record<string, unknown> },
  tool: string,
  args: (w: World) => Record<string, unknown>,
];

// Each attack must never put the secret in front of the model.
const SPELLINGS: Case[] = [
  ["the file itself", {}, "read", () => ({ path: ".env" })],
  ["a symlink to it", {}, "read", () => ({ path: "env-link" })],
  ["a symlink inside src to ../.env", {}, "read", () => ({ path: "src/config" })],
  ["dot-dot through a directory", {}, "read", () => ({ path: "src/../.env" })],
  ["its absolute real path", {}, "read", (w) => ({ path: join(w.real, ".env") })],
  [
    "the real path of a symlinked working directory",
    { symlinkedCwd: true },
    "read",
    (w) => ({ path: join(w.real, ".env") }),
  ],
  ["the symlinked working directory's spelling", { symlinkedCwd: true }, "read", () => ({ path: ".env" })],
  ["a tools-fs root in a subfolder", { fs: { root: "app" } }, "read", () => ({ path: ".env" })],
  ["grep naming the file", {}, "grep", () => ({ pattern: "KEY", path: ".env" })],
  ["grep naming the symlink", {}, "grep", () => ({ pattern: "KEY", path: "env-link" })],
  ["grep over the whole tree", {}, "grep", () => ({ pattern: "KEY" })],
  ["grep over the tree, literal secret", {}, "grep", () => ({ pattern: SECRET, literal: true })],
  ["grep in a subfolder root", { fs: { root: "app" } }, "grep", () => ({ pattern: "KEY" })],
  ["grep with a glob for it", {}, "grep", () => ({ pattern: "KEY", glob: "**/.env" })],
  [
    "edit (whose diff shows the file)",
    {},
    "edit",
    () => ({ path: "env-link", oldText: "API", newText: "X" }),
  ],
  ["grep over the outside through ..{,}", {}, "grep", () => ({ pattern: "OUTSIDE", glob: "..{,}/**" })],
];

describe("a denied file stays denied under every spelling (invariant 2)", () => {
  it.each(SPELLINGS)("%s", async (_label, setup, tool, args) => {
    const w = world(setup);
    const result = await attempt(w, tool, args(w), setup.fs);
    // The literal search echoes its own pattern in "No matches for ..."; nothing else may show it.
    expect(result.text.replace(`No matches for "${SECRET}"`, "")).not.toContain(SECRET);
    expect(readFileSync(join(w.real, ".env"), "utf8")).toBe(`API_KEY=${SECRET}\n`);
  });

  it("denies direct reads at the gate, naming the rule", async () => {
    const w = world({ symlinkedCwd: true });
    for (const path of [".env", "env-link", "src/config", join(w.real, ".env")]) {
      const result = await attempt(w, "read", { path });
      expect(result, path).toMatchObject({ isError: true, decision: "deny" });
      expect(result.text, path).toContain("secrets stay out");
    }
  });

  it("still reads and greps what no rule covers", async () => {
    const w = world();
    expect(await attempt(w, "read", { path: "src/a.ts" })).toMatchObject({
      isError: false,
      text: "export const a = 1;",
    });
    const grep = await attempt(w, "grep", { pattern: "=|export" });
    expect(grep.text.split("\n")).toContain("src/a.ts:1:export const a = 1;");
    expect(grep.text).not.toContain(SECRET);
  });
});

describe("walks leave out what a rule denies, and never leave the root (invariants 2, 3)", () => {
  const LISTINGS: [string, string, Record<string, unknown>, string[], string[]][] = [
    [
      "find every file",
      "find",
      { pattern: "*" },
      ["src/a.ts", "app/main.ts"],
      [".env", "env-link", "src/config"],
    ],
    ["find by name", "find", { pattern: ".env" }, [], [".env"]],
    ["ls the root", "ls", {}, ["src/", "app/"], [".env", "env-link@"]],
    ["ls a folder with a link to .env", "ls", { path: "src" }, ["a.ts"], ["config"]],
    ["find ..{,}/** from the root", "find", { pattern: "..{,}/**" }, [], ["secret.txt", "rein-sec-out-"]],
    ["find {..,.}/** from the root", "find", { pattern: "{..,.}/**" }, [], ["secret.txt"]],
    ["find */../../** from the root", "find", { pattern: "*/../../**" }, [], ["secret.txt"]],
  ];
  it.each(LISTINGS)("%s", async (_label, tool, args, shown, hidden) => {
    const w = world();
    const result = await attempt(w, tool, args);
    for (const name of shown) expect(result.text.split("\n")).toContain(name);
    const lines = result.text.split("\n");
    for (const name of hidden) {
      expect(
        lines.some((line) => line === name || line.endsWith(`/${name}`) || line.includes(`/${name}`)),
      ).toBe(false);
    }
  });
});

describe("odd paths give a clean error (invariant 8)", () => {
  const ODD: [string, string][] = [
    ["a 5,000-character path", "a/".repeat(2500)],
    ["a 300-character name", "x".repeat(300)],
    ["a NUL byte", "src/a.ts\u0000.env"],
  ];
  it.each(ODD)("%s", async (_label, path) => {
    const w = world();
    for (const tool of ["read", "write", "ls"]) {
      const result = await attempt(w, tool, { path, content: "x" });
      expect(result.isError, tool).toBe(true);
      expect(result.text, tool).not.toMatch(/ENAMETOOLONG|ERR_|\bat .*\.js:\d+/);
      expect(result.text, tool).toMatch(/path .* (long|over|NUL)/);
    }
  });
});

describe("Rein's own state is not writable through the file tools (invariant 4)", () => {
  const STATE: [string, string, Record<string, unknown>][] = [
    ["a session file", "write", { path: ".rein/sessions/s1.jsonl", content: "forged\n" }],
    ["a new file under .rein", "write", { path: ".rein/grants.jsonl", content: "forged\n" }],
    ["the config file", "write", { path: "rein.config.ts", content: "export default { plugins: [] };\n" }],
    ["the config file, edited", "edit", { path: "rein.config.ts", oldText: "{}", newText: "{ x: 1 }" }],
    [
      "a session through a symlink to .rein",
      "write",
      { path: "state/sessions/s1.jsonl", content: "forged\n" },
    ],
  ];
  it.each(STATE)("%s", async (_label, tool, args) => {
    const w = world();
    symlinkSync(".rein", join(w.real, "state"));
    const result = await attempt(w, tool, args);
    expect(result.isError).toBe(true);
    expect(result.text).toContain("is protected");
    expect(readFileSync(join(w.real, ".rein/sessions/s1.jsonl"), "utf8")).toBe("{}\n");
    expect(readFileSync(join(w.real, "rein.config.ts"), "utf8")).toBe("export default {};\n");
    expect(existsSync(join(w.real, ".rein/grants.jsonl"))).toBe(false);
  });

  it("an allow rule cannot reach outside through a symlink it seems to cover", async () => {
    const w = world();
    mkdirSync(join(w.real, "src/out"), { recursive: true });
    symlinkSync(w.outside, join(w.real, "src/escape"));
    const result = await attempt(w, "write", { path: "src/escape/new.txt", content: "x" });
    expect(result.isError).toBe(true);
    expect(existsSync(join(w.outside, "new.txt"))).toBe(false);
    writeFileSync(join(w.real, "src/ok.ts"), "");
    expect(await attempt(w, "write", { path: "src/ok.ts", content: "ok\n" })).toMatchObject({
      isError: false,
    });
  });
});

describe("every walk result is checked on its real path (invariant 3)", () => {
  it("drops an entry whose symlink leads outside, and one that vanished", async () => {
    const { checkEntry } = await import("../../src/walk.js");
    const w = world();
    const scope = { tool: "find", root: w.real, project: w.real, exclusions: undefined };
    expect(await checkEntry(scope, join(w.real, "src/leak.txt"))).toBe("outside");
    expect(await checkEntry(scope, join(w.real, "src/gone.txt"))).toBe("outside");
    expect(await checkEntry(scope, join(w.real, "src/a.ts"))).toEqual({ real: join(w.real, "src/a.ts") });
  });
});

describe("files the host protects (its config and the plugin files it loaded)", () => {
  it("write and edit refuse them under any spelling; other files stay writable", async () => {
    const w = world();
    writeFiles(w.real, { "plugins/no-secrets.ts": "export default {};\n" });
    symlinkSync("plugins", join(w.real, "p"));
    const host = definePlugin({
      name: "host",
      setup(rein) {
        rein.onDispose(protectedFiles(rein).add("rein", [join(w.real, "plugins/no-secrets.ts")]));
      },
    });
    for (const [tool, args] of [
      ["write", { path: "plugins/no-secrets.ts", content: "pwned" }],
      ["write", { path: "p/no-secrets.ts", content: "pwned" }],
      ["edit", { path: "./plugins/../p/no-secrets.ts", oldText: "{}", newText: "{ x }" }],
    ] as const) {
      t = await createTestHarness({
        plugins: [host, fsTools],
        config: { cwd: w.cwd },
        script: [{ toolCalls: [{ name: tool, args }] }, "done"],
      });
      await t.prompt("go");
      const result = t.messages().find((m) => m.role === "toolResult");
      expect(JSON.stringify(result?.content), `${tool} ${args.path}`).toContain(
        "is protected (rein loaded it",
      );
      await t.dispose();
      t = undefined;
    }
    expect(readFileSync(join(w.real, "plugins/no-secrets.ts"), "utf8")).toBe("export default {};\n");
  });
});

describe("what Rein or git reads later is not writable, existing or not (invariant 9)", () => {
  const FUTURE: [string, string, Record<string, unknown>][] = [
    ["a new config name beside the existing one", "write", { path: "rein.config.mjs", content: "x" }],
    ["a config in a subfolder", "write", { path: "app/rein.config.json", content: "{}" }],
    ["a project plugin dir", "write", { path: ".rein-plugins/p.ts", content: "x" }],
    ["the local layer", "write", { path: ".rein/local.json", content: "{}" }],
    ["git's config", "write", { path: ".git/config", content: "[core]\n\tfsmonitor = x\n" }],
    [
      "git's config, edited",
      "edit",
      { path: ".git/config", oldText: "[core]", newText: "[core]\n\tfsmonitor = x" },
    ],
    ["a new commondir", "write", { path: ".git/commondir", content: "/tmp/evil\n" }],
    ["a hook", "write", { path: ".git/hooks/pre-commit", content: "touch pwned\n" }],
    ["a nested repository's config", "write", { path: "vendor/.git/config", content: "x" }],
    ["a worktree's .git file", "write", { path: "app/.git", content: "gitdir: /tmp/evil\n" }],
    ["git's config through a symlink", "write", { path: "g/config", content: "x" }],
    ["a config name through a symlinked folder", "write", { path: "loop/rein.config.js", content: "x" }],
    ["a config through ..", "write", { path: "src/../rein.config.js", content: "x" }],
  ];
  it.each(FUTURE)("%s", async (_label, tool, args) => {
    const w = world();
    writeFiles(w.real, { ".git/config": "[core]\n", ".git/HEAD": "ref: refs/heads/main\n" });
    symlinkSync(".git", join(w.real, "g"));
    symlinkSync(".", join(w.real, "loop"));
    // The project's own list cannot give Rein's state up.
    const result = await attempt(w, tool, args, { protectedPaths: [] });
    expect(result.isError, result.text).toBe(true);
    expect(result.text).toContain("is protected");
    expect(readFileSync(join(w.real, ".git/config"), "utf8")).toBe("[core]\n");
    for (const planted of [
      "rein.config.mjs",
      "rein.config.js",
      "app/rein.config.json",
      ".rein-plugins",
      ".rein/local.json",
      ".git/commondir",
      ".git/hooks",
      "vendor",
      "app/.git",
    ]) {
      expect(existsSync(join(w.real, planted)), planted).toBe(false);
    }
  });
});
