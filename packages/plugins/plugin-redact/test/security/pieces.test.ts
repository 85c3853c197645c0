/**
 * Red-team table for invariant 7: a secret never reaches the model in pieces or
 * unmasked - not through a cut line (grep, read), an error result, a denial reason
 * (policy, permissions), the assistant's own text when configured, or a streaming
 * update (masking function; the harness hook is wired separately). End to end with
 * @rein/tools-fs, @rein/plugin-policy and @rein/plugin-permissions on real files.
 */
import { mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { createPermissionsPlugin } from "@rein/plugin-permissions";
import policy from "@rein/plugin-policy";
import { defineTool, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import fsTools from "@rein/tools-fs";
import { afterEach, describe, expect, it } from "vitest";
import { BUILTIN_PATTERNS, createRedactor, createRedactPlugin, resultMasker } from "../../src/index.js";

/** An OpenAI-shaped key: the builtin pattern needs 20+ characters after `sk-`. */
const TOKEN = "sk-proj-A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6";
/** Pieces that must never be seen: any 12 characters of the key past its prefix. */
const PIECES = [TOKEN.slice(0, 20), TOKEN.slice(8, 20), TOKEN.slice(20, 32), TOKEN.slice(-12)];

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

const redact = createRedactPlugin({ env: {} });

function project(files: Record<string, string>) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "rein-redact-")));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

/** What the model is sent after the scripted steps (the last request's context). */
async function modelSees(
  cwd: string,
  script: { name: string; args: Record<string, unknown> }[],
  plugins: unknown[],
  text = "done",
): Promise<string> {
  t = await createTestHarness({
    // biome-ignore lint/suspicious/noExplicitAny: plugin entries of every options type.
    plugins: plugins as any,
    config: { cwd },
    script: [...script.map((call) => ({ toolCalls: [call] })), text, "again"],
  });
  await t.prompt("go");
  await t.prompt("and again");
  // Tool cases: what came back to the model (the model's own call holds what it wrote itself).
  const messages = t.requests.at(-1)?.context.messages ?? [];
  return JSON.stringify(script.length > 0 ? messages.filter((m) => m.role !== "assistant") : messages);
}

const errorTool = defineTool({
  name: "fail",
  description: "Fails loudly",
  parameters: Type.Object({}),
  execute: () => ({
    content: [{ type: "text", text: `request failed: Authorization: Bearer ${TOKEN}` }],
    isError: true,
  }),
});

const longLine = `${"x".repeat(480)} ${TOKEN} tail`;

type Case = [
  label: string,
  files: Record<string, string>,
  script: { name: string; args: Record<string, unknown> }[],
  plugins: unknown[],
  text?: string,
];

const CASES: Case[] = [
  [
    "grep's long-line cut (token across column 500)",
    { "a.txt": `${longLine}\n` },
    [{ name: "grep", args: { pattern: "tail" } }],
    [fsTools, redact],
  ],
  [
    "read's cut of a line over the byte limit",
    { "a.txt": `${longLine}\n` },
    [{ name: "read", args: { path: "a.txt" } }],
    [[fsTools, { maxBytes: 500 }], redact],
  ],
  ["an error result", {}, [{ name: "fail", args: {} }], [redact, [errorTool]]],
  [
    "a policy denial quoting the call",
    {},
    [{ name: "write", args: { path: `keys/${TOKEN}.txt`, content: "x" } }],
    [fsTools, [policy, { rules: [{ rule: "write(keys/**)", decision: "deny", reason: "no keys" }] }], redact],
  ],
  [
    "a permission denial quoting the call",
    {},
    [{ name: "write", args: { path: `${TOKEN}.txt`, content: "x" } }],
    [
      fsTools,
      createPermissionsPlugin({ io: { input: new PassThrough(), output: new PassThrough(), isTTY: false } }),
      redact,
    ],
  ],
  [
    "the assistant's own text (assistantText: true)",
    {},
    [],
    [[redact, { assistantText: true }]],
    `here is the key: ${TOKEN}`,
  ],
];

describe("a secret never reaches the model, whole or in pieces (invariant 7)", () => {
  it.each(CASES)("%s", async (_label, files, script, plugins, text) => {
    const seen = await modelSees(project(files), script, plugins, text);
    for (const piece of PIECES) expect(seen).not.toContain(piece);
    expect(seen).toContain("[redacted:");
  });

  it("the same cases leak without the redact plugin (the attack is real)", async () => {
    const seen = await modelSees(
      project({ "a.txt": `${longLine}\n` }),
      [{ name: "grep", args: { pattern: "tail" } }],
      [fsTools],
    );
    expect(seen).toContain(TOKEN.slice(0, 15));
    expect(seen).not.toContain(TOKEN);
  });
});

describe("streaming updates", () => {
  it("resultMasker masks an update payload (the toolUpdate tap uses this function)", () => {
    const masker = resultMasker(createRedactor({ patterns: BUILTIN_PATTERNS, values: [] }), true);
    const { payload, count } = masker({
      content: [{ type: "text" as const, text: `partial output ${TOKEN}` }],
      details: { lines: [`${TOKEN}`] },
    });
    expect(count).toBe(2);
    expect(JSON.stringify(payload)).not.toContain(TOKEN.slice(8, 20));
  });
});
