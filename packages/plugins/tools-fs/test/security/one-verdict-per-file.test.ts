/**
 * Issue 28, item 5: a path rule is decided on the file the tool will touch, whichever
 * roots the policy and the tool use, so every spelling of one file gets one verdict
 * (walks included). The case the red team proved: the policy's root is the working
 * directory, `@rein/tools-fs` has `root: "ws"`, and `read(.env)` denied `read .env`
 * but let the absolute spelling of the same `ws/.env` through, and grep printed it.
 */
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import policy from "@rein/plugin-policy";
import type { AgentMessage } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import fsTools from "../../src/index.js";
import { tempDir, writeFiles } from "../helpers.js";

const SECRET = "sk-ws-7e6d5c4b3a29";
const RULES = [{ id: "env", rule: "read(.env)", decision: "deny" as const, reason: "secrets stay out" }];

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

/** A project whose tool root `ws` holds a secret `.env`, a link to it and a plain file. */
function project(): string {
  const dir = tempDir("rein-roots-");
  writeFiles(dir, {
    "ws/.env": `WS_KEY=${SECRET}\n`,
    "ws/notes.txt": "notes\n",
    "ws/sub/readme.md": "readme\n",
  });
  symlinkSync(".env", join(dir, "ws/env-link"));
  return dir;
}

async function call(dir: string, name: string, args: Record<string, unknown>) {
  t = await createTestHarness({
    plugins: [
      [fsTools, { root: "ws" }],
      [policy, { rules: RULES }],
    ],
    config: { cwd: dir },
    script: [{ toolCalls: [{ name, args }] }, "done"],
  });
  await t.prompt("go");
  const result = t
    .messages()
    .find((m): m is Extract<AgentMessage, { role: "toolResult" }> => m.role === "toolResult");
  if (!result) throw new Error("no tool result");
  const text = result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
  const decision = t.decisions()[0];
  await t.dispose();
  t = undefined;
  return { text, decision };
}

describe("one verdict per file, whichever roots the policy and the tool use", () => {
  const SPELLINGS: [label: string, path: (dir: string) => string][] = [
    ["the tool's own spelling", () => ".env"],
    ["dot-slash", () => "./.env"],
    ["through a folder and back", () => "sub/../.env"],
    ["the absolute path", (dir) => join(dir, "ws/.env")],
    ["the absolute path with ..", (dir) => join(dir, "ws/sub/../.env")],
    ["a symlink beside it", () => "env-link"],
  ];

  it.each(SPELLINGS)("read through %s is denied by read(.env), naming the rule", async (_label, spell) => {
    const dir = project();
    const { text, decision } = await call(dir, "read", { path: spell(dir) });
    expect(decision).toMatchObject({ decision: "deny" });
    expect(decision?.by).toContain("env");
    expect(text).not.toContain(SECRET);
  });

  it.each([
    ["grep over the tool's root", { pattern: "KEY" }],
    ["grep for the secret itself", { pattern: SECRET, literal: true }],
    ["grep naming the folder absolutely", { pattern: "KEY", path: "." }],
  ])("%s never prints it", async (_label, args) => {
    const dir = project();
    const { text } = await call(dir, "grep", args);
    expect(text.replace(`No matches for "${SECRET}"`, "")).not.toContain(SECRET);
  });

  it("find and ls leave it out, and list what no rule covers", async () => {
    const dir = project();
    const found = await call(dir, "find", { pattern: "**/*" });
    expect(found.text).toContain("notes.txt");
    expect(found.text).not.toMatch(/(^|\n)\.env(\n|$)/);
    const listed = await call(dir, "ls", {});
    expect(listed.text).toContain("notes.txt");
    expect(listed.text.split("\n")).not.toContain(".env");
  });

  it("a file the rule does not name stays readable under every spelling", async () => {
    const dir = project();
    for (const path of ["notes.txt", "./notes.txt", join(dir, "ws/notes.txt")]) {
      const { text, decision } = await call(dir, "read", { path });
      expect(decision?.decision, path).toBe("allow");
      expect(text, path).toBe("notes");
    }
  });
});
