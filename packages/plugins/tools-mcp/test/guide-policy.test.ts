/**
 * The policy in docs/guides/mcp.md does what the guide says: a table of attacks on
 * Rein's own state and on secrets through server-filesystem's tools, decided by the
 * real @rein/plugin-policy with the options copied out of the guide's config block.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import policy from "@rein/plugin-policy";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const guide = readFileSync(
  join(import.meta.dirname, "..", "..", "..", "..", "docs", "guides", "mcp.md"),
  "utf8",
);

/** The options object after `"@rein/plugin-policy",` in the guide's first TypeScript block. */
function guidePolicyOptions(): unknown {
  const block = /```ts[^\n]*\n([\s\S]*?)```/.exec(guide)?.[1] ?? "";
  const start = block.indexOf('"@rein/plugin-policy",');
  expect(start, "the guide's config lists @rein/plugin-policy").toBeGreaterThan(0);
  const open = block.indexOf("{", start);
  let depth = 0;
  let end = open;
  for (; end < block.length; end++) {
    if (block[end] === "{") depth++;
    if (block[end] === "}" && --depth === 0) break;
  }
  return new Function(`return (${block.slice(open, end + 1)});`)();
}

let t: TestHarness;
beforeAll(async () => {
  t = await createTestHarness({ config: { cwd: "/project" }, plugins: [[policy, guidePolicyOptions()]] });
});
afterAll(() => t.dispose());

describe("the guide's policy", () => {
  it.each([
    ["mcp__fs__write_file", { path: ".rein/sessions/s.jsonl", content: "{}" }, "policy:rein-state"],
    ["mcp__fs__write_file", { path: "notes/../.rein/grants", content: "" }, "policy:rein-state"],
    ["mcp__fs__edit_file", { path: "/project/.rein/audit.jsonl", edits: [] }, "policy:rein-state"],
    ["mcp__fs__write_file", { path: "rein.config.ts", content: "" }, "policy:rein-config"],
    ["mcp__fs__write_file", { path: "./rein.config.mjs", content: "" }, "policy:rein-config"],
    ["mcp__fs__move_file", { source: "x", destination: "/project/.rein/x" }, "policy:rein-state-anywhere"],
    ["mcp__fs__read_file", { path: ".env" }, "policy:env"],
    ["mcp__fs__read_text_file", { path: "./config/.env.local" }, "policy:env"],
    ["mcp__fs__read_media_file", { path: "/project/.env" }, "policy:env"],
    ["mcp__fs__get_file_info", { path: "deploy/.env.production" }, "policy:env"],
    ["mcp__fs__move_file", { source: "a.txt", destination: "b.txt" }, "policy:no-moves"],
    ["mcp__fs__read_multiple_files", { paths: ["a.txt", ".env"] }, "policy:one-by-one"],
    ["read", { path: "sub/.env" }, "policy:env"],
  ])("%s %j is denied by %s", async (name, args, by) => {
    const verdict = await t.checkToolCall({ name, args }, { skipPermission: true, unregistered: "evaluate" });
    expect(verdict).toMatchObject({ decision: "deny", by });
  });

  it.each([
    ["mcp__fs__write_file", { path: "notes/today.md", content: "hi" }, "allow"],
    // No rule: the permissions plugin's default for the tool's risk decides.
    ["mcp__fs__write_file", { path: "src/app.ts", content: "" }, "allow"],
    ["mcp__fs__read_text_file", { path: "environment.md" }, "allow"],
  ])("%s %j is not denied by the policy", async (name, args, decision) => {
    const verdict = await t.checkToolCall({ name, args }, { skipPermission: true, unregistered: "evaluate" });
    expect(verdict.decision).toBe(decision);
    expect(verdict.by).not.toMatch(/^policy:(rein|env|no-moves|one-by-one)/);
  });
});
