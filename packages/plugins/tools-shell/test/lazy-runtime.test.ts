/**
 * `@anthropic-ai/sandbox-runtime` loads with the first sandboxed command, not with the
 * tool: a fresh Node process (the built `dist/`, as hosts load it) records every module
 * it resolves through `module.registerHooks`.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const INDEX = fileURLToPath(new URL("../dist/index.js", import.meta.url));

const SCRIPT = `
import { registerHooks } from "node:module";
const seen = () => resolved.some((s) => s.startsWith("@anthropic-ai/sandbox-runtime"));
const resolved = [];
registerHooks({ resolve(specifier, context, next) { resolved.push(specifier); return next(specifier, context); } });
const shell = await import(process.env.INDEX);
const tool = shell.createBashTool();
const off = shell.createBashTool({ sandbox: { mode: "off" } });
const context = { signal: new AbortController().signal, update() {}, cwd: process.env.ROOT, sessionId: "s", toolCallId: "c", facts: {} };
const before = seen();
const plain = await off.execute({ command: "true" }, context);
const afterPlain = seen();
const sandboxed = await tool.execute({ command: "echo in-sandbox" }, context);
const text = sandboxed.content.map((c) => c.text ?? "").join("");
await shell.releaseRuntimeIfIdle();
process.stdout.write(JSON.stringify({ before, plainError: plain.isError, afterPlain, sandboxedError: sandboxed.isError, text, after: seen() }));
`;

it("importing the tool and running unsandboxed commands does not load the runtime; the first sandboxed command does", () => {
  const root = tempDir();
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", SCRIPT], {
    cwd: root,
    env: { ...process.env, INDEX, ROOT: root },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(child.status, child.stderr).toBe(0);
  const seen = JSON.parse(child.stdout) as Record<string, unknown>;
  expect(seen).toMatchObject({
    before: false,
    plainError: false,
    afterPlain: false,
    sandboxedError: false,
    after: true,
  });
  expect(seen.text).toContain("in-sandbox");
});
