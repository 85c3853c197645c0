/**
 * Red-team tables for `rein hook <agent>` (security invariants 1, 4, 7, 8): the model
 * controls a tool call's input, so every spelling of a call that reaches something a
 * rule decides must be decided as what the agent will really do, and every tool Rein
 * cannot read is refused where a rule could apply. Decided on the project's stack
 * (plugin-policy with real rules, the first-party stand-ins, a real file tree), the
 * way `rein hook` decides them.
 */
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import policy from "@rein/plugin-policy";
import { definePlugin, Stage } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentName } from "../../src/hook/agent-protocols.js";
import { prepareHarness } from "../../src/hook/handle-event.js";
import { decideToolEvent, decideToolResult } from "../../src/hook/hook-decision.js";
import type { HookInput } from "../../src/hook/hook-input.js";
import { mapToolCall, patchPaths } from "../../src/hook/tool-mapping.js";

const RULES = [
  { id: "echo", rule: "bash(echo *)", decision: "allow", reason: "echo is harmless" },
  { id: "push", rule: "bash(git push *)", decision: "deny", reason: "no pushing" },
  { id: "env", rule: "read(**/.env*)", decision: "deny", reason: ".env files hold secrets" },
  { id: "env-write", rule: "write(**/.env*)", decision: "deny", reason: ".env files hold secrets" },
  { id: "writes", rule: "write(**)", decision: "allow", reason: "the agent may write anything" },
];

const masker = definePlugin({
  name: "masker",
  setup(rein) {
    rein.hooks.toolResult.tap({ name: "masker", stage: Stage.last }, (result) => ({
      ...result,
      content: result.content.map((block) =>
        block.type === "text" ? { ...block, text: block.text.replaceAll("sk-SECRET", "[masked]") } : block,
      ),
    }));
  },
});

let dir = "";
let test: TestHarness;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "rein-hook-attacks-")));
  mkdirSync(join(dir, ".rein"));
  mkdirSync(join(dir, "src"));
  writeFileSync(join(dir, ".env"), "S=1\n");
  test = await createTestHarness({
    config: { cwd: dir },
    plugins: [[policy, { rules: RULES }], masker],
  });
  prepareHarness(test.harness);
});
afterAll(() => test?.dispose());

const event = (
  agent: AgentName,
  toolName: string,
  toolInput: Record<string, unknown>,
  extra: Partial<HookInput> = {},
): HookInput => ({
  agent,
  agentEvent: "PreToolUse",
  event: "PreToolUse",
  sessionId: "s",
  cwd: dir,
  toolName,
  toolInput,
  raw: {},
  ...extra,
});

const decide = async (agent: AgentName, toolName: string, toolInput: Record<string, unknown>) => {
  const { verdict } = await decideToolEvent(test.harness, event(agent, toolName, toolInput));
  return verdict.kind === "tool" ? verdict.decision : "none";
};

const PATCH_TO_REIN = "*** Begin Patch\n*** Add File: .rein/local.json\n+{}\n*** End Patch";

describe("a shell call is decided as the command the agent runs", () => {
  it.each([
    // Codex's shell tools: argv arrays, `cmd`, a patch Codex applies itself.
    ["codex", "shell", { command: ["bash", "-lc", "git push origin main"] }, "deny"],
    ["codex", "shell", { command: ["git", "push"] }, "deny"],
    ["codex", "local_shell", { command: ["bash", "-lc", "git push"] }, "deny"],
    ["codex", "exec_command", { cmd: "git push" }, "deny"],
    ["codex", "exec_command", { cmd: ["git", "push"] }, "deny"],
    ["codex", "Bash", { command: `apply_patch <<'EOF'\n${PATCH_TO_REIN}\nEOF` }, "deny"],
    ["codex", "shell", { command: ["apply_patch", PATCH_TO_REIN] }, "deny"],
    [
      "codex",
      "exec_command",
      { cmd: `apply_patch <<'EOF'\n${PATCH_TO_REIN.replace("*** Add", "  ***  add")}\nEOF` },
      "deny",
    ],
    // A field of a type the mapping cannot read is refused, never decided as an empty command.
    ["claude-code", "Bash", { command: { toString: "git push" } }, "deny"],
    ["claude-code", "Bash", { command: 42 }, "deny"],
    ["gemini", "run_shell_command", { command: ["git", "push"] }, "deny"],
    ["codex", "shell", { command: ["git", 1] }, "deny"],
  ] as const)("%s %s %j is %s", async (agent, tool, input, expected) => {
    expect(await decide(agent, tool, input as Record<string, unknown>)).toBe(expected);
  });

  it("an allowed command stays allowed in each form (the table can fail)", async () => {
    expect(await decide("codex", "shell", { command: ["bash", "-lc", "echo hi"] })).toBe("allow");
    expect(await decide("codex", "exec_command", { cmd: "echo hi" })).toBe("allow");
    expect(await decide("gemini", "run_shell_command", { command: "echo hi" })).toBe("allow");
  });

  it.each([
    [["env", "HOME=.", "bash", "-lc", "echo hi"]],
    [["bash", "-l", "-c", "echo hi"]],
    [["bash", "--login", "-c", "echo hi"]],
    [["bash", "-lc", "echo hi", "extra"]],
    [["sh", "-lc", "echo hi"]],
  ])("only Codex's exact `bash -lc X` envelope is decided as X: %j is not allowed", async (command) => {
    expect(await decide("codex", "shell", { command })).not.toBe("allow");
  });
});

describe("a write to Rein's state is refused from every directory the call can run in", () => {
  it.each([
    ["claude-code", "Bash", { command: "cd .rein && echo '{}' > local.json" }],
    ["claude-code", "Bash", { command: "cd src; cd ../.rein; echo x > local.json" }],
    ["claude-code", "Bash", { command: "pushd .rein >/dev/null && echo x >> local.json" }],
    ["claude-code", "Bash", { command: "cd - && echo x > local.json" }],
    ["claude-code", "Bash", { command: "cd ~ && echo x > y" }],
    ["codex", "exec_command", { cmd: "echo '{}' > local.json", workdir: ".rein" }],
    ["codex", "shell", { command: ["bash", "-lc", "echo x > local.json"], workdir: join(dir, ".rein") }],
    ["gemini", "run_shell_command", { command: "echo x > local.json", dir_path: ".rein" }],
    ["gemini", "run_shell_command", { command: "echo x > settings.json", directory: ".gemini" }],
    ["codex", "apply_patch", { input: PATCH_TO_REIN }],
  ] as const)("%s %s %j is denied", async (agent, tool, input) => {
    expect(await decide(agent, tool, input as Record<string, unknown>)).toBe("deny");
  });

  it("the same redirection elsewhere is allowed (the check can fail)", async () => {
    expect(await decide("claude-code", "Bash", { command: "cd src && echo x > notes.txt" })).not.toBe("deny");
    expect(await decide("codex", "exec_command", { cmd: "echo x > notes.txt", workdir: "src" })).not.toBe(
      "deny",
    );
  });
});

describe("every file a multi-file call touches is decided", () => {
  it.each([
    ["gemini", "read_many_files", { paths: [".env"] }],
    ["gemini", "read_many_files", { include: ["src/a.ts"], paths: [".env"] }],
    ["gemini", "read_many_files", { include: ".env" }],
    ["gemini", "read_many_files", { include: [{ path: ".env" }] }],
    [
      "claude-code",
      "MultiEdit",
      { file_path: "src/a.ts", edits: [{ file_path: ".env", old_string: "a", new_string: "b" }] },
    ],
    ["claude-code", "MultiEdit", { file_path: "src/a.ts", edits: "x" }],
    ["claude-code", "Read", { file_path: [".env"] }],
    ["claude-code", "Write", { file_path: { path: ".env" }, content: "x" }],
    ["gemini", "read_file", { absolute_path: 7 }],
  ] as const)("%s %s %j is denied", async (agent, tool, input) => {
    expect(await decide(agent, tool, input as Record<string, unknown>)).toBe("deny");
  });

  it("apply_patch headers are read in every spelling Codex accepts", () => {
    expect(
      patchPaths(
        "*** Begin Patch\r\n  *** Update File: a\r\n***  Add File:  b \n*** add file: c\r*** Move to: d",
      ),
    ).toEqual(["a", "b", "c", "d"]);
  });
});

describe("a tool Rein does not map is refused where a rule could apply", () => {
  it.each([
    ["claude-code", "bash_tool", { script: "git push" }],
    ["claude-code", "FancyEdit", { target_file: ".env" }],
    ["claude-code", "FancyEdit", { options: { filePath: ".env" } }],
    ["claude-code", "FancyEdit", { changes: [{ where: "/etc/passwd" }] }],
    ["claude-code", "NotebookRead", { notebook_path: ".env" }],
    ["codex", "view_image", { path: "/etc/passwd" }],
    ["gemini", "Run_Shell_Command", { command: "git push" }],
    ["claude-code", "bash ", { command: "git push" }],
    ["claude-code", "mcp__fs__write_file", { path: ".rein/local.json", content: "{}" }],
    ["claude-code", "mcp__fs__write_file", { args: { dest: join(dir, ".git", "hooks", "pre-commit") } }],
    ["codex", "mcp__fs__edit", { file: "rein.config.ts" }],
  ] as const)("%s %s %j is denied", async (agent, tool, input) => {
    expect(await decide(agent, tool, input as Record<string, unknown>)).toBe("deny");
  });

  it("a tool that names nothing stays the agent's to decide (the check can fail)", async () => {
    expect(
      await decide("claude-code", "TodoWrite", { todos: [{ content: "fix the build", status: "pending" }] }),
    ).toBe("none");
    expect(
      mapToolCall("claude-code", "Task", { prompt: "look at the tests", description: "d" }).unchecked,
    ).toBe(undefined);
    expect(
      await decide("claude-code", "mcp__github__create_issue", { title: "t", body: "see src/a.ts" }),
    ).toBe("none");
  });
});

describe("redaction covers every tool's result, at every depth", () => {
  const result = (toolName: string, toolResponse: unknown) =>
    decideToolResult(test.harness, {
      ...event("claude-code", toolName, {}),
      event: "PostToolUse",
      toolResponse,
    });

  it.each([
    ["BashOutput", { stdout: "key=sk-SECRET", status: "completed" }],
    ["mcp__db__query", [{ type: "text", text: "sk-SECRET" }]],
    ["mcp__db__query", { content: [{ type: "text", text: "row sk-SECRET" }] }],
    ["Bash", { stdout: "ok", nested: { stderr: "sk-SECRET" } }],
  ] as const)("%s %j comes back masked, its shape kept", async (tool, response) => {
    const { verdict } = await result(tool, response);
    expect(verdict.kind).toBe("output");
    const output = JSON.stringify((verdict as { output: unknown }).output);
    expect(output).not.toContain("sk-SECRET");
    expect(output).toContain("[masked]");
    expect(JSON.stringify(response).replaceAll("sk-SECRET", "[masked]")).toBe(output);
  });

  it("a result with no secret is left alone (the check can fail)", async () => {
    expect((await result("BashOutput", { stdout: "fine" })).verdict.kind).toBe("none");
  });
});
