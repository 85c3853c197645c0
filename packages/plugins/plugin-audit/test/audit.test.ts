import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { definePlugin, defineTool, Type, textMasks } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import audit, { type AuditRecord, canonicalJson } from "../src/index.js";

const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({
    command: Type.String(),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
  }),
  execute: (args) => ({ content: [{ type: "text", text: `ran ${args.command}` }] }),
});

/** Denies rm, asks for git push (answered allow), no opinion otherwise. */
const house = definePlugin({
  name: "house",
  setup(rein) {
    rein.hooks.toolGate.tap("house", (call) => {
      const command = String(call.args.command);
      if (command.startsWith("rm")) return { decision: "deny", rule: "no-rm", reason: "never delete" };
      if (command.startsWith("git push")) return { decision: "ask", rule: "push", reason: "publishes" };
      return undefined;
    });
    rein.hooks.permissionAsk.tap("house", () => ({ decision: "allow", reason: "operator ok" }));
  },
});

const call = (command: string, extra: Record<string, unknown> = {}) => ({
  toolCalls: [{ name: "bash", args: { command, ...extra } }],
});

let dir: string;
let t: TestHarness | undefined;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-audit-"));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await t?.dispose();
  t = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

const readRecords = (file: string): AuditRecord[] =>
  fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as AuditRecord);

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

describe("audit log", () => {
  it("records every decision with verdict, by, reason, tool, args hash, time, session and run", async () => {
    t = await createTestHarness({
      plugins: [house, audit],
      tools: [bash],
      config: { cwd: dir },
      script: [call("ls", { env: { B: "2", A: "1" } }), call("rm -rf x"), call("git push"), "done"],
    });
    const outcome = await t.prompt("go");
    expect(outcome.status).toBe("completed");

    const records = readRecords(path.join(dir, ".rein/audit.jsonl"));
    expect(records.map((r) => [r.tool, r.decision, r.by, r.reason, r.askedBy])).toEqual([
      ["bash", "allow", "harness:default", "no gate had an opinion; default is allow", undefined],
      ["bash", "deny", "house:no-rm", "never delete", undefined],
      ["bash", "allow", "house", "operator ok", "house:push"],
    ]);
    const decisions = t.decisions();
    for (const [i, record] of records.entries()) {
      expect(record.session).toBe(t.session.id);
      expect(record.run).toBe(outcome.runId);
      expect(record.turn).toEqual(expect.any(String));
      expect(record.toolCallId).toBe(decisions[i]?.toolCallId);
      expect(Number.isNaN(Date.parse(record.time))).toBe(false);
      expect(record.args).toBeUndefined();
    }
    // The hash is of canonical JSON: key order in the call does not matter.
    expect(records[0]?.argsHash).toBe(sha256('{"command":"ls","env":{"A":"1","B":"2"}}'));
    expect(canonicalJson({ env: { B: "2", A: "1" }, command: "ls" })).toBe(
      '{"command":"ls","env":{"A":"1","B":"2"}}',
    );
  });

  it("writes to the configured file and can include the arguments", async () => {
    const file = path.join(dir, "logs/decisions.jsonl");
    t = await createTestHarness({
      plugins: [[audit, { file, includeArgs: true }]],
      tools: [bash],
      script: [call("ls"), "done"],
    });
    await t.prompt("go");
    expect(readRecords(file)[0]).toMatchObject({ tool: "bash", args: { command: "ls" } });
  });

  it("survives a full disk: plugin_error is reported, the run completes, the records are written later", async () => {
    const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const append = vi.spyOn(fs, "appendFileSync").mockImplementation(() => {
      throw enospc;
    });
    t = await createTestHarness({
      plugins: [audit],
      tools: [bash],
      config: { cwd: dir },
      script: [call("a"), call("b"), "done"],
    });
    const outcome = await t.prompt("go");
    expect(outcome.status).toBe("completed");
    expect(t.decisions()).toHaveLength(2);
    const errors = t.eventsOf("plugin_error");
    expect(errors).toHaveLength(2);
    expect(errors[0]).toMatchObject({ plugin: "audit", hook: "event:tool_decision" });
    expect(errors[0]?.message).toContain("ENOSPC");
    expect(errors[1]?.message).toContain("2 record(s) waiting");
    expect(t.logs.filter((log) => log.level === "error")).toHaveLength(1);

    // Space again: the kept records are written, in order, before the next one.
    append.mockRestore();
    t.script(call("c"), "done");
    await t.prompt("again");
    const file = path.join(dir, ".rein/audit.jsonl");
    expect(readRecords(file).map((r) => r.argsHash)).toEqual(
      ["a", "b", "c"].map((command) => sha256(canonicalJson({ command }))),
    );
  });

  it("survives an unwritable path", async () => {
    const blocker = path.join(dir, "not-a-dir");
    fs.writeFileSync(blocker, "");
    t = await createTestHarness({
      plugins: [[audit, { file: path.join(blocker, "audit.jsonl") }]],
      tools: [bash],
      script: [call("a"), "done"],
    });
    expect((await t.prompt("go")).status).toBe("completed");
    expect(t.eventsOf("plugin_error")[0]).toMatchObject({ plugin: "audit" });
  });
});

describe("paths and secrets in records", () => {
  const open = defineTool({
    name: "open",
    description: "Open a file",
    risk: "read",
    parameters: Type.Object({ path: Type.String(), note: Type.Optional(Type.String()) }),
    paths: { path: "file" },
    execute: () => ({ content: [{ type: "text", text: "opened" }] }),
  });
  const masking = definePlugin({
    name: "mask",
    setup(rein) {
      rein.onDispose(textMasks(rein).add("mask", (text) => text.replaceAll("hunter2hunter2", "[redacted]")));
    },
  });

  it("records the canonical paths the gates saw (a symlink to .env is .env) and masks each line", async () => {
    const cwd = fs.realpathSync(dir);
    fs.writeFileSync(path.join(cwd, ".env"), "");
    fs.symlinkSync(".env", path.join(cwd, "env-link"));
    t = await createTestHarness({
      plugins: [masking, [audit, { file: "audit.jsonl", includeArgs: true }]],
      tools: [open],
      config: { cwd },
      script: [
        { toolCalls: [{ name: "open", args: { path: "env-link", note: "pw hunter2hunter2" } }] },
        "done",
      ],
    });
    await t.prompt("go");
    const text = fs.readFileSync(path.join(cwd, "audit.jsonl"), "utf8");
    expect(text).not.toContain("hunter2hunter2");
    const [record] = text
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as AuditRecord);
    expect(record).toMatchObject({
      tool: "open",
      paths: [".env"],
      args: { path: "env-link", note: "pw [redacted]" },
    });
  });
});
