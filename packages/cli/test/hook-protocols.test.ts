/**
 * Rein's answers in each agent's hook protocol. Codex's are validated against
 * the output schemas Codex 0.171.0 itself ships (embedded in its binary,
 * read from node_modules here): Codex runs the call on any answer its schema
 * refuses, so every deny must pass them. Gemini CLI's are checked against its
 * documented protocol (hooks/types.d.ts of @google/gemini-cli-core 0.61.0 and
 * the hooks reference: exit 2 blocks with stderr as the reason; `decision`
 * allow / deny / ask / block); agent-hooks.e2e.test.ts also runs it.
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { answerFor, failureAnswer, type HookVerdict } from "../src/hook/agent-protocols.js";
import { parseHookInput } from "../src/hook/hook-input.js";
import { mapToolCall, patchPaths } from "../src/hook/tool-mapping.js";
import { codexBinary } from "./support/agent-binaries.js";

/** Codex's `<event>.command.output` schemas, as its binary embeds them. */
function codexSchemas(): Map<string, object> {
  const binary = readFileSync(codexBinary());
  const schemas = new Map<string, object>();
  const marker = Buffer.from('{\n  "$schema": "http://json-schema.org/draft-07/schema#"');
  for (let at = binary.indexOf(marker); at !== -1; at = binary.indexOf(marker, at + 1)) {
    const text = binary.subarray(at, at + 40_000).toString("utf8");
    // The schema is one pretty-printed object: it ends at the first line that is a lone "}".
    const end = text.indexOf("\n}");
    try {
      const schema = JSON.parse(text.slice(0, end + 2)) as { title?: string };
      if (schema.title) schemas.set(schema.title, schema);
    } catch {
      // not a whole schema
    }
  }
  return schemas;
}

const deny: HookVerdict = { kind: "tool", decision: "deny", by: "policy:no-touch", reason: "no new files" };
const ask: HookVerdict = { kind: "tool", decision: "ask", by: "policy:push", reason: "pushing publishes" };
const allow: HookVerdict = { kind: "tool", decision: "allow", by: "policy:echo", reason: "harmless" };

describe("Codex answers validate against Codex 0.171.0's own output schemas", () => {
  const schemas = codexSchemas();
  const ajv = new Ajv({ strict: false });
  const valid = (title: string, text: string) => {
    const schema = schemas.get(title);
    expect(schema, `${title} in the Codex binary`).toBeDefined();
    const ok = ajv.validate(schema as object, JSON.parse(text));
    expect(ajv.errors ?? [], text).toEqual([]);
    return ok;
  };

  it("denies PreToolUse with hookEventName and a non-empty reason, nothing else", () => {
    const answer = answerFor("codex", "PreToolUse", "PreToolUse", deny);
    expect(answer.exitCode).toBe(0);
    expect(answer.stdout.trim().split("\n")).toHaveLength(1);
    expect(valid("pre-tool-use.command.output", answer.stdout)).toBe(true);
    const parsed = JSON.parse(answer.stdout);
    expect(parsed.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(parsed.hookSpecificOutput.permissionDecisionReason).toContain("policy:no-touch");
  });

  it("never says ask to Codex (it would run the call): an ask is a deny that says so", () => {
    const answer = answerFor("codex", "PreToolUse", "PreToolUse", ask);
    expect(valid("pre-tool-use.command.output", answer.stdout)).toBe(true);
    const parsed = JSON.parse(answer.stdout);
    expect(parsed.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(parsed.hookSpecificOutput.permissionDecisionReason).toContain("cannot ask");
  });

  it("the schemas are strict: an unknown field or a missing hookEventName fails them (so the check can fail)", () => {
    const schema = schemas.get("pre-tool-use.command.output") as object;
    const base = { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "r" };
    expect(ajv.validate(schema, { hookSpecificOutput: base })).toBe(true);
    expect(ajv.validate(schema, { hookSpecificOutput: { ...base, by: "policy" } })).toBe(false);
    expect(ajv.validate(schema, { hookSpecificOutput: { permissionDecision: "deny" } })).toBe(false);
  });

  it("says an allow by silence (a bare allow is unsupported in Codex)", () => {
    expect(answerFor("codex", "PreToolUse", "PreToolUse", allow)).toEqual({
      exitCode: 0,
      stdout: "",
      stderr: "",
    });
  });

  it("answers PermissionRequest, UserPromptSubmit, Stop and PostToolUse in their schemas", () => {
    valid(
      "permission-request.command.output",
      answerFor("codex", "PermissionRequest", "PermissionRequest", deny).stdout,
    );
    valid(
      "permission-request.command.output",
      answerFor("codex", "PermissionRequest", "PermissionRequest", allow).stdout,
    );
    const block = { kind: "block", by: "guard", reason: "run the tests first" } as const;
    valid(
      "user-prompt-submit.command.output",
      answerFor("codex", "UserPromptSubmit", "UserPromptSubmit", block).stdout,
    );
    valid("stop.command.output", answerFor("codex", "Stop", "Stop", block).stdout);
    const output = { kind: "output", output: { content: [] } } as const;
    // Codex refuses updatedMCPToolOutput at run time (though its schema lists it): a block, read by the model.
    const redacted = answerFor("codex", "PostToolUse", "PostToolUse", output).stdout;
    valid("post-tool-use.command.output", redacted);
    expect(JSON.parse(redacted)).toMatchObject({
      decision: "block",
      reason: expect.stringContaining("redacted"),
    });
    valid(
      "session-start.command.output",
      answerFor("codex", "SessionStart", "SessionStart", { kind: "context", text: "hi" }).stdout,
    );
  });
});

describe("Claude Code 2.1.332 answers", () => {
  it("PreToolUse: permissionDecision with the reason naming the rule, hookEventName matching", () => {
    for (const verdict of [deny, ask, allow]) {
      const parsed = JSON.parse(answerFor("claude-code", "PreToolUse", "PreToolUse", verdict).stdout);
      expect(parsed).toEqual({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: (verdict as { decision: string }).decision,
          permissionDecisionReason: expect.stringContaining(`Rein (${(verdict as { by: string }).by})`),
        },
      });
    }
  });

  it("PermissionRequest: decision.behavior; an ask leaves the dialog to the person", () => {
    expect(
      JSON.parse(answerFor("claude-code", "PermissionRequest", "PermissionRequest", deny).stdout),
    ).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: expect.stringContaining("no new files") },
      },
    });
    expect(answerFor("claude-code", "PermissionRequest", "PermissionRequest", ask).stdout).toBe("");
  });

  it("PostToolUse redaction replaces the whole output object (updatedToolOutput)", () => {
    const output = {
      stdout: "[redacted]",
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
    };
    expect(
      JSON.parse(answerFor("claude-code", "PostToolUse", "PostToolUse", { kind: "output", output }).stdout),
    ).toEqual({
      hookSpecificOutput: { hookEventName: "PostToolUse", updatedToolOutput: output },
    });
  });

  it("a failure on a gating event is exit 2 with the reason on stderr; elsewhere exit 1", () => {
    const failed = failureAnswer("PreToolUse", "config broke");
    expect(failed).toMatchObject({ exitCode: 2, stdout: "" });
    expect(failed.stderr).toContain("config broke");
    expect(failureAnswer("SessionStart", "x").exitCode).toBe(1);
    expect(failureAnswer(undefined, "unreadable").exitCode).toBe(2);
  });

  it("PreCompact: a cancelled compaction is exit 2 (what Claude Code reads as a block)", () => {
    expect(
      answerFor("claude-code", "PreCompact", "PreCompact", { kind: "block", by: "x", reason: "keep it" })
        .exitCode,
    ).toBe(2);
  });
});

describe("Gemini CLI answers (documented protocol, @google/gemini-cli-core 0.61.0)", () => {
  it("BeforeTool is PreToolUse; decisions are top-level decision + reason", () => {
    const input = parseHookInput(
      "gemini",
      JSON.stringify({
        session_id: "g1",
        cwd: "/w",
        hook_event_name: "BeforeTool",
        tool_name: "run_shell_command",
        tool_input: { command: "ls" },
        timestamp: "t",
        transcript_path: "",
      }),
    );
    expect(input.event).toBe("PreToolUse");
    expect(JSON.parse(answerFor("gemini", "PreToolUse", "BeforeTool", deny).stdout)).toEqual({
      decision: "deny",
      reason: expect.stringContaining("policy:no-touch"),
    });
    expect(
      JSON.parse(
        answerFor("gemini", "UserPromptSubmit", "BeforeAgent", { kind: "block", by: "g", reason: "no" })
          .stdout,
      ),
    ).toMatchObject({ decision: "deny" });
  });

  it("an unknown event name is refused, not guessed", () => {
    expect(() =>
      parseHookInput("gemini", JSON.stringify({ session_id: "g", cwd: "/", hook_event_name: "PreToolUse" })),
    ).toThrow(/unknown hook event/);
  });
});

describe("tool mapping: one rule holds in every agent", () => {
  it("maps each agent's shell tool to bash with the command", () => {
    expect(mapToolCall("claude-code", "Bash", { command: "git push", description: "d" }).calls).toEqual([
      { name: "bash", args: { command: "git push" } },
    ]);
    expect(mapToolCall("codex", "Bash", { command: "git push" }).calls).toEqual([
      { name: "bash", args: { command: "git push" } },
    ]);
    // The directory the call names is kept: Rein's reins are checked from there too.
    expect(mapToolCall("gemini", "run_shell_command", { command: "git push", dir_path: "." }).calls).toEqual([
      { name: "bash", args: { command: "git push" }, cwd: "." },
    ]);
  });

  it("maps file tools to read / write / edit with path", () => {
    expect(mapToolCall("claude-code", "Read", { file_path: "/p/.env", limit: 5 }).calls).toEqual([
      { name: "read", args: { path: "/p/.env", limit: 5 } },
    ]);
    expect(mapToolCall("gemini", "read_file", { file_path: ".env" }).calls[0]).toEqual({
      name: "read",
      args: { path: ".env" },
    });
    expect(
      mapToolCall("claude-code", "Edit", { file_path: "a", old_string: "x", new_string: "y" }).calls[0],
    ).toEqual({
      name: "edit",
      args: { path: "a", oldText: "x", newText: "y" },
    });
    expect(mapToolCall("claude-code", "Glob", { pattern: "**/*.ts" }).calls[0]).toEqual({
      name: "find",
      args: { pattern: "**/*.ts" },
    });
    expect(mapToolCall("claude-code", "Grep", { pattern: "x", path: "src", glob: "*.ts" }).calls[0]).toEqual({
      name: "grep",
      args: { pattern: "x", path: "src", glob: "*.ts" },
    });
    expect(mapToolCall("claude-code", "WebFetch", { url: "https://x.test", prompt: "p" }).calls[0]).toEqual({
      name: "web_fetch",
      args: { url: "https://x.test" },
    });
  });

  it("decides a MultiEdit as one edit per change, and an apply_patch as a write per file it touches", () => {
    const multi = mapToolCall("claude-code", "MultiEdit", {
      file_path: "a.ts",
      edits: [
        { old_string: "1", new_string: "2" },
        { old_string: "3", new_string: "4" },
      ],
    });
    expect(multi.calls.map((call) => call.name)).toEqual(["edit", "edit"]);
    const patch =
      "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: .env\n+S=1\n*** End Patch";
    expect(patchPaths(patch)).toEqual(["src/a.ts", ".env"]);
    expect(
      mapToolCall("codex", "apply_patch", { command: patch }).calls.map((call) => call.args.path),
    ).toEqual(["src/a.ts", ".env"]);
  });

  it("keeps MCP tools under Rein's mcp__<server>__<tool> name (Gemini's from its mcp_context)", () => {
    expect(mapToolCall("claude-code", "mcp__github__create_issue", { title: "t" })).toMatchObject({
      mapped: true,
      calls: [{ name: "mcp__github__create_issue" }],
    });
    expect(
      mapToolCall("gemini", "mcp_github_create_issue", {}, { server: "github", tool: "create_issue" })
        .calls[0]?.name,
    ).toBe("mcp__github__create_issue");
  });

  it("marks an unmapped tool whose input names a path or command as unchecked (fail closed)", () => {
    expect(mapToolCall("claude-code", "FancyTool", { file_path: "/etc/passwd" })).toMatchObject({
      mapped: false,
      unchecked: "file_path",
    });
    expect(mapToolCall("claude-code", "TodoWrite", { todos: [] })).toMatchObject({ mapped: false });
    expect(mapToolCall("claude-code", "TodoWrite", { todos: [] }).unchecked).toBeUndefined();
  });
});
