/**
 * `rein hook <agent>` as the agents call it (the built binary, the event's
 * JSON on stdin), for what the real-agent tests do not reach: a tool result
 * redacted by @rein/plugin-redact comes back as Claude Code's complete Bash
 * output object; an unmapped tool whose input names a path is refused; Gemini
 * CLI's BeforeTool is answered in its protocol; `--on-failure continue`
 * leaves the call to the agent; and the recorded session replays unchanged.
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dist = (pkg: string) => JSON.stringify(join(repo, "packages", "plugins", pkg, "dist", "index.js"));
const CONFIG = `import { defineConfig } from "@rein/sdk";
import policy from ${dist("plugin-policy")};
import redact from ${dist("plugin-redact")};
export default defineConfig({
  model: { script: [] },
  plugins: [
    [policy, { rules: [
      { id: "echo", rule: "bash(echo *)", decision: "allow", reason: "echo is harmless" },
      { id: "no-touch", rule: "bash(touch *)", decision: "deny", reason: "no new files from the shell" },
      { id: "env", rule: "read(**/.env*)", decision: "deny", reason: ".env files hold secrets" },
      { id: "writes", rule: "write(**)", decision: "allow", reason: "the agent may write anything" },
    ] }],
    redact,
  ],
});
`;

const hook = (agent: string, dir: string, event: Record<string, unknown>, extra: string[] = []) =>
  rein(["hook", agent, ...extra], dir, { input: JSON.stringify({ session_id: "ev-1", cwd: dir, ...event }) });

describe("rein hook events", () => {
  it("redacts a Bash result as Claude Code's whole output object, and a read of .env is denied with canonical paths", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const secret = `sk-ant-api03-${"x".repeat(40)}`;
    const response = {
      stdout: `key=${secret}\n`,
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
    };
    const post = await hook("claude-code", dir, {
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "cat key" },
      tool_use_id: "toolu_r1",
      tool_response: response,
    });
    expect(post.code, post.stderr).toBe(0);
    const updated = JSON.parse(post.stdout).hookSpecificOutput;
    expect(updated.hookEventName).toBe("PostToolUse");
    expect(Object.keys(updated.updatedToolOutput).sort()).toEqual(Object.keys(response).sort());
    expect(updated.updatedToolOutput.stdout).not.toContain(secret);
    expect(updated.updatedToolOutput.interrupted).toBe(false);

    const read = await hook("claude-code", dir, {
      hook_event_name: "PreToolUse",
      tool_name: "Read",
      tool_input: { file_path: join(dir, "src", "..", ".env") },
      tool_use_id: "toolu_r2",
    });
    expect(JSON.parse(read.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("policy:env"),
    });
  }, 60_000);

  it("refuses an unmapped tool whose input names a path, and answers Gemini CLI's BeforeTool in its fields", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const unmapped = await hook("claude-code", dir, {
      hook_event_name: "PreToolUse",
      tool_name: "FancyUpload",
      tool_input: { file_path: "/etc/shadow" },
      tool_use_id: "toolu_u1",
    });
    expect(JSON.parse(unmapped.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("rein-hook"),
    });
    const gemini = await hook("gemini", dir, {
      hook_event_name: "BeforeTool",
      tool_name: "run_shell_command",
      tool_input: { command: "echo ok && touch marker", dir_path: "." },
      timestamp: "2026-12-01T00:00:00Z",
      transcript_path: "",
    });
    expect(gemini.code, gemini.stderr).toBe(0);
    expect(JSON.parse(gemini.stdout)).toEqual({
      decision: "deny",
      reason: expect.stringContaining("policy:no-touch"),
    });
  }, 60_000);

  it("--on-failure continue leaves the call to the agent when the stack cannot load; the default blocks", async () => {
    const dir = project({ "rein.config.ts": "export default { plugins: ['./missing.ts'] };\n" });
    const event = {
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      tool_use_id: "t",
    };
    const blocked = await hook("codex", dir, event);
    expect(blocked.code).toBe(2);
    expect(blocked.stdout).toBe("");
    expect(blocked.stderr).toContain("missing.ts");
    const open = await hook("codex", dir, event, ["--on-failure", "continue"]);
    expect(open.code).toBe(0);
    expect(open.stdout).toBe("");
    expect(open.stderr).toContain("not decided");
  }, 60_000);

  it("a recorded agent session replays unchanged under the same stack (prompt, calls, closing answer)", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const send = (event: Record<string, unknown>) =>
      hook("claude-code", dir, { session_id: "replay-1", ...event });
    await send({ hook_event_name: "UserPromptSubmit", prompt: "tidy up" });
    await send({
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo ok; touch marker" },
      tool_use_id: "toolu_a",
    });
    await send({
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo fine" },
      tool_use_id: "toolu_b",
    });
    const stop = await send({
      hook_event_name: "Stop",
      stop_hook_active: false,
      last_assistant_message: "done",
    });
    expect(stop.code, stop.stderr).toBe(0);
    const replayed = await rein(["replay", "replay-1"], dir);
    expect(replayed.stderr).toContain("2 tool calls replayed, 0 changed");
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    const coverage = await rein(["replay", "--coverage", "replay-1"], dir);
    expect(coverage.stdout).toContain("policy:no-touch");
    expect(coverage.stdout).toContain("policy:echo");
  }, 60_000);

  it("never lets the agent write Rein's config or the settings holding its hook, whatever the rules allow", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const write = await hook("claude-code", dir, {
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(dir, "rein.config.ts"), content: "export default {}" },
      tool_use_id: "toolu_p1",
    });
    expect(JSON.parse(write.stdout).hookSpecificOutput).toMatchObject({
      permissionDecision: "deny",
      permissionDecisionReason: expect.stringContaining("rein-hook:protected"),
    });
    const shell = await hook("codex", dir, {
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo ok > .codex/config.toml" },
      tool_use_id: "toolu_p2",
      turn_id: "turn-1",
    });
    expect(JSON.parse(shell.stdout).hookSpecificOutput.permissionDecisionReason).toContain(
      "holds the agent's hooks",
    );
  }, 60_000);

  it("records the calls of hooks that run at once (an agent's parallel calls) in one session, none lost", async () => {
    const dir = project({ "rein.config.ts": CONFIG });
    const answers = await Promise.all(
      [0, 1, 2, 3].map((n) =>
        hook("claude-code", dir, {
          session_id: "parallel-1",
          hook_event_name: "PreToolUse",
          tool_name: "Bash",
          tool_input: { command: `echo call-${n}` },
          tool_use_id: `toolu_par${n}`,
        }),
      ),
    );
    for (const answer of answers) expect(answer.code, answer.stderr).toBe(0);
    const listed = await rein(["sessions", "list", "--json"], dir);
    const sessions = listed.stdout.trim().split("\n").filter(Boolean);
    expect(sessions).toHaveLength(1);
    const shown = await rein(["sessions", "show", "parallel-1"], dir);
    for (const n of [0, 1, 2, 3]) expect(shown.stdout).toContain(`echo call-${n}`);
  }, 60_000);
});
