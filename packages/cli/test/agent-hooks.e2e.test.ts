/**
 * `rein hook` behind the REAL agents: Claude Code 2.1.332 and Codex 0.171.0
 * (their npm packages' native binaries) and Gemini CLI 0.61.0 (its Node
 * bundle) run non-interactively in a temp project, offline, against a
 * scripted model server on 127.0.0.1 (Anthropic Messages / OpenAI Responses /
 * Gemini streamGenerateContent, streaming), with Rein's hook written by
 * `rein hook install` after `rein trust --yes`. The model asks for
 * `echo ok; touch marker` under a policy allowing `echo` and denying `touch`:
 * the marker is never created, the agent is told the rule's reason, and
 * `rein sessions show` lists the decision. Also an allowed call that really
 * runs, and a hook failure (a plugin that throws) that blocks.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { claudeBinary, codexLauncher, geminiBundle } from "./support/agent-binaries.js";
import { cleanup, machineEnv, project, rein, spawnRein } from "./support/rein-process.js";
import { startAnthropicServer } from "./support/wire/anthropic-messages.js";
import { startGeminiServer } from "./support/wire/google-generative-ai.js";
import { startOpenAIResponsesServer } from "./support/wire/openai-responses.js";
import type { CapturedRequest, WireServer, WireTurn } from "./support/wire/recording-server.js";

afterAll(cleanup);

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const dist = (pkg: string) => JSON.stringify(join(repo, "packages", "plugins", pkg, "dist", "index.js"));
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

/** A plugin whose gate throws on `ls` calls: the hook cannot decide, so it must block. */
const BOOM = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "boom",
  setup(rein) {
    rein.hooks.toolGate.tap("boom", (call) => {
      if (call.name === "bash" && call.facts.command?.commands.some((c) => c.normalized[0] === "ls")) throw new Error("boom");
      return undefined;
    });
  },
});
`;

const CONFIG = `import { defineConfig } from "@rein/sdk";
import policy from ${dist("plugin-policy")};
import permissions from ${dist("plugin-permissions")};

export default defineConfig({
  model: { script: [] },
  plugins: [
    "./boom.ts",
    [policy, { rules: [
      { id: "echo", rule: "bash(echo *)", decision: "allow", reason: "echo is harmless" },
      { id: "ls", rule: "bash(ls *)", decision: "allow", reason: "listing is harmless" },
      { id: "no-touch", rule: "bash(touch *)", decision: "deny", reason: "no new files from the shell" },
    ] }],
    permissions,
  ],
});
`;

/** The agent's shell call for each prompt word, then a closing answer once a tool result came back. */
const COMMANDS: Record<string, string> = {
  compound: "echo ok; touch marker",
  allowed: "echo rein-$((6*7))",
  braces: "echo rein-{1..3}",
  failing: "ls; touch boom-marker",
};

function commandFor(prompt: string): string {
  const word = Object.keys(COMMANDS).find((key) => prompt.includes(`task:${key}`));
  return COMMANDS[word ?? "compound"] as string;
}

/** Every string anywhere in a request body, joined (what the agent sent the model). */
const bodyText = (request: CapturedRequest) => JSON.stringify(request.body);

function anthropicScript(request: CapturedRequest): WireTurn {
  const body = request.body as {
    messages?: { role: string; content: unknown }[];
    tools?: { name: string }[];
  };
  const messages = body?.messages ?? [];
  const last = messages.at(-1);
  const hasResult = JSON.stringify(last?.content ?? "").includes("tool_result");
  if (!body?.tools?.some((tool) => tool.name === "Bash") || hasResult) return { text: "done", usage: USAGE };
  const prompt = JSON.stringify(messages[0]?.content ?? "");
  return {
    toolCall: {
      id: `toolu_${Date.now()}`,
      name: "Bash",
      args: { command: commandFor(prompt), description: "run it" },
    },
    usage: USAGE,
  };
}

function responsesScript(request: CapturedRequest): WireTurn {
  const body = request.body as {
    input?: { type?: string; role?: string; content?: unknown }[];
    tools?: { name?: string }[];
  };
  const input = body?.input ?? [];
  if (input.some((item) => item.type === "function_call_output")) return { text: "done", usage: USAGE };
  const tool = body?.tools?.find(
    (t) => t.name === "shell" || t.name === "exec_command" || t.name === "shell_command",
  );
  if (!tool) return { text: "done", usage: USAGE };
  const prompt = JSON.stringify(input);
  const command = commandFor(prompt);
  const args =
    tool.name === "exec_command"
      ? { cmd: command }
      : tool.name === "shell_command"
        ? { command }
        : { command: ["bash", "-lc", command] };
  return { toolCall: { id: `call_${Date.now()}`, name: tool.name as string, args }, usage: USAGE };
}

function geminiScript(request: CapturedRequest): WireTurn {
  const body = request.body as {
    contents?: { parts?: unknown[] }[];
    tools?: { functionDeclarations?: { name: string }[] }[];
  };
  const contents = body?.contents ?? [];
  const shell = body?.tools?.some((tool) =>
    tool.functionDeclarations?.some((f) => f.name === "run_shell_command"),
  );
  if (!shell || JSON.stringify(contents.at(-1) ?? {}).includes("functionResponse"))
    return { text: "done", usage: USAGE };
  const command = commandFor(JSON.stringify(contents));
  return { toolCall: { id: `g_${Date.now()}`, name: "run_shell_command", args: { command } }, usage: USAGE };
}

interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runAgent(
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<AgentRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...cleanEnv(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** This process's environment without credentials or agent settings that would reach outside. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(ANTHROPIC|OPENAI|CLAUDE|CODEX)_/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...machineEnv, REIN_TRUST_PROJECT: "" };
}

function hookProject(): string {
  const dir = project({ "rein.config.ts": CONFIG, "boom.ts": BOOM });
  return dir;
}

async function trustAndInstall(dir: string, agent: string, extra: string[] = []): Promise<void> {
  const trusted = await rein(["trust", "--yes"], dir, { env: { REIN_TRUST_PROJECT: "" } });
  expect(trusted.code, trusted.stderr).toBe(0);
  const installed = await rein(["hook", "install", agent, ...extra], dir, {
    env: { REIN_TRUST_PROJECT: "" },
  });
  expect(installed.code, installed.stderr).toBe(0);
}

async function sessionsOf(dir: string): Promise<{ id: string; name?: string }[]> {
  const listed = await rein(["sessions", "list", "--json"], dir, { env: { REIN_TRUST_PROJECT: "" } });
  expect(listed.code, listed.stderr).toBe(0);
  return listed.stdout
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { id: string; name?: string });
}

/** The tool results the agent sent back to the model (what the model was told). */
const toolResultsSent = (server: WireServer) =>
  server.requests
    .map(bodyText)
    .filter((text) => text.includes("tool_result") || text.includes("function_call_output"));

describe("Claude Code 2.1.332 with rein hook claude-code", () => {
  const claude = claudeBinary();

  async function runClaude(
    dir: string,
    task: string,
    asPrinted = false,
    env: Record<string, string> = {},
  ): Promise<{ run: AgentRun; server: WireServer }> {
    const server = await startAnthropicServer(anthropicScript, "claude-sonnet-4-5");
    const home = mkdtempSync(join(tmpdir(), "rein-claude-home-"));
    try {
      const run = await runAgent(
        claude,
        // Offline and as root: a model of the scripted server's, and no permission prompts.
        [
          "-p",
          asPrinted ? task : `task:${task}`,
          "--permission-mode",
          "bypassPermissions",
          "--model",
          "claude-sonnet-4-5",
        ],
        dir,
        {
          HOME: home,
          CLAUDE_CONFIG_DIR: join(home, ".claude"),
          ANTHROPIC_BASE_URL: server.origin,
          ANTHROPIC_API_KEY: "sk-test",
          DISABLE_TELEMETRY: "1",
          DISABLE_AUTOUPDATER: "1",
          DISABLE_ERROR_REPORTING: "1",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          IS_SANDBOX: "1",
          ...env,
        },
      );
      return { run, server };
    } finally {
      await server.close();
    }
  }

  it("the guide, as printed: its rein.config.ts and its three commands deny the touch in `echo ok; touch marker`, tell the model the rule's reason, and record the decision", async () => {
    const guide = readFileSync(join(repo, "docs", "guides", "agent-hooks.md"), "utf8");
    const config = /```ts file=rein\.config\.ts\n([\s\S]*?)```/.exec(guide)?.[1] as string;
    const block = /## Three commands\n\n```sh\n([\s\S]*?)```/.exec(guide);
    const commands = (block?.[1] ?? "").trim().split("\n");
    expect(commands).toHaveLength(3);
    const dir = project({ "rein.config.ts": config });
    const [trust, install, agent] = commands as [string, string, string];
    // `rein trust` asks on a terminal; the guide gives `--yes` for scripts.
    expect(trust).toBe("rein trust");
    const trusted = await rein(["trust", "--yes"], dir, { env: { REIN_TRUST_PROJECT: "" } });
    expect(trusted.code, trusted.stderr).toBe(0);
    const installed = await rein(install.split(" ").slice(1), dir, { env: { REIN_TRUST_PROJECT: "" } });
    expect(installed.code, installed.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(dir, ".claude", "settings.json"), "utf8"));
    expect(settings.hooks.PreToolUse[0].hooks[0].command).toContain("hook claude-code");
    const prompt = /^claude -p "(.*)"$/.exec(agent)?.[1] as string;
    const { run, server } = await runClaude(dir, prompt, true);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(existsSync(join(dir, "marker"))).toBe(false);
    const told = toolResultsSent(server).join("\n");
    expect(told).toContain("Rein (policy:no-touch): no new files from the shell");
    const sessions = await sessionsOf(dir);
    expect(sessions).toHaveLength(1);
    const shown = await rein(["sessions", "show", (sessions[0] as { id: string }).id], dir, {
      env: { REIN_TRUST_PROJECT: "" },
    });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("echo ok; touch marker");
    expect(shown.stdout).toContain("denied by policy:no-touch");
  }, 120_000);

  it("lets an allowed call really run, and records it as allowed by the rule", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "claude-code");
    const { run, server } = await runClaude(dir, "allowed");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    // The shell's arithmetic: the command really ran in Claude Code's Bash tool.
    expect(toolResultsSent(server).join("\n")).toContain("rein-42");
    const [session] = await sessionsOf(dir);
    const shown = await rein(["sessions", "show", (session as { id: string }).id], dir, {
      env: { REIN_TRUST_PROJECT: "" },
    });
    expect(shown.stdout).toContain("allowed by policy:echo");
    // What the tool returned, as Claude Code's PostToolUse sent it.
    expect(shown.stdout).toContain("claude-code ran Bash: rein-42");
  }, 120_000);

  it("blocks the call when a gate throws (the harness's failure policy), telling the model which plugin failed", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "claude-code");
    const { run, server } = await runClaude(dir, "failing");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(existsSync(join(dir, "boom-marker"))).toBe(false);
    const told = toolResultsSent(server).join("\n");
    expect(told).toContain('plugin \\"boom\\" failed in toolGate');
    expect(told).toContain("failing closed");
  }, 120_000);

  it("blocks every call when the hook itself cannot decide (the config changed since it was trusted)", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "claude-code");
    writeFileSync(join(dir, "rein.config.ts"), `${CONFIG}\n// edited after trust\n`);
    const { run, server } = await runClaude(dir, "allowed");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    // The prompt itself is blocked (UserPromptSubmit fails closed too): the model never runs a tool.
    expect(toolResultsSent(server)).toEqual([]);
    expect(run.stdout).toContain("UserPromptSubmit operation blocked by hook");
    expect(run.stdout).toContain("changed since it was trusted");
    expect(run.stdout).toContain("Rein fails closed");
  }, 120_000);

  it("decides through `rein hook serve` as a Claude Code http hook (token in a header from the environment)", async () => {
    const dir = hookProject();
    const trusted = await rein(["trust", "--yes"], dir, { env: { REIN_TRUST_PROJECT: "" } });
    expect(trusted.code, trusted.stderr).toBe(0);
    const token = "serve-token-e2e-0123456789";
    const serve = spawnRein(["hook", "serve"], dir, { REIN_TRUST_PROJECT: "", REIN_HOOK_TOKEN: token });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let stderr = "";
        serve.stderr?.on("data", (chunk) => {
          stderr += chunk;
          const found = /listening on (http:\/\/127\.0\.0\.1:\d+\/hook\/claude-code)/.exec(stderr)?.[1];
          if (found) resolve(found);
        });
        serve.on("exit", (code) => reject(new Error(`hook serve exited ${code}: ${stderr}`)));
      });
      const http = {
        type: "http",
        url,
        headers: { Authorization: "Bearer $REIN_HOOK_TOKEN" },
        allowedEnvVars: ["REIN_HOOK_TOKEN"],
        timeout: 30,
      };
      mkdirSync(join(dir, ".claude"), { recursive: true });
      writeFileSync(
        join(dir, ".claude", "settings.json"),
        JSON.stringify({ hooks: { PreToolUse: [{ hooks: [http] }] } }),
      );
      const { run, server } = await runClaude(dir, "compound", false, { REIN_HOOK_TOKEN: token });
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(existsSync(join(dir, "marker"))).toBe(false);
      expect(toolResultsSent(server).join("\n")).toContain(
        "Rein (policy:no-touch): no new files from the shell",
      );
    } finally {
      serve.kill("SIGTERM");
    }
  }, 120_000);
});

describe("Codex 0.171.0 with rein hook codex", () => {
  const codex = codexLauncher();

  async function runCodex(dir: string, task: string): Promise<{ run: AgentRun; server: WireServer }> {
    const server = await startOpenAIResponsesServer(responsesScript, "gpt-5");
    // CODEX_HOME outside the project: Codex would otherwise read the project as its home.
    const home = mkdtempSync(join(tmpdir(), "rein-codex-home-"));
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, "config.toml"),
      [
        'model = "gpt-5"',
        'model_provider = "scripted"',
        'approval_policy = "never"',
        'sandbox_mode = "danger-full-access"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[features]",
        "plugins = false",
        "[model_providers.scripted]",
        'name = "scripted"',
        `base_url = "${server.origin}/v1"`,
        'wire_api = "responses"',
        'env_key = "OPENAI_API_KEY"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        // Codex loads a project's own hooks only in a trusted project.
        `[projects.${JSON.stringify(realpathSync(dir))}]`,
        'trust_level = "trusted"',
        "",
      ].join("\n"),
    );
    try {
      const run = await runAgent(
        process.execPath,
        [codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", `task:${task}`],
        dir,
        { CODEX_HOME: home, OPENAI_API_KEY: "sk-test" },
      );
      return { run, server };
    } finally {
      await server.close();
    }
  }

  it("denies the touch in `echo ok; touch marker` with an exact answer Codex honours, and records it", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "codex");
    expect(readFileSync(join(dir, ".codex", "config.toml"), "utf8")).toContain("[[hooks.PreToolUse]]");
    const { run, server } = await runCodex(dir, "compound");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(existsSync(join(dir, "marker"))).toBe(false);
    const told = toolResultsSent(server).join("\n");
    expect(told).toContain("policy:no-touch");
    expect(told).toContain("no new files from the shell");
    const [session] = await sessionsOf(dir);
    const shown = await rein(["sessions", "show", (session as { id: string }).id], dir, {
      env: { REIN_TRUST_PROJECT: "" },
    });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("codex session");
    expect(shown.stdout).toContain("denied by policy:no-touch");
  }, 120_000);

  it("lets an allowed call really run", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "codex");
    const { run, server } = await runCodex(dir, "allowed");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(toolResultsSent(server).join("\n")).toContain("rein-42");
  }, 120_000);

  it("blocks the call when a gate throws", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "codex");
    const { run, server } = await runCodex(dir, "failing");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(existsSync(join(dir, "boom-marker"))).toBe(false);
    expect(toolResultsSent(server).join("\n")).toContain("failing closed");
  }, 120_000);

  it("blocks when the hook itself cannot decide (the config changed since it was trusted): exit 2 blocks the prompt", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "codex");
    writeFileSync(join(dir, "rein.config.ts"), `${CONFIG}\n// edited after trust\n`);
    const { run, server } = await runCodex(dir, "allowed");
    const said = run.stdout + run.stderr;
    expect(toolResultsSent(server).join("\n")).not.toContain("rein-42");
    // Codex shows the block, not the reason: the prompt never reaches the model with a tool.
    expect(said).toContain("hook: UserPromptSubmit Blocked");
    expect(toolResultsSent(server)).toEqual([]);
  }, 120_000);
});

describe("Gemini CLI 0.61.0 with rein hook gemini", () => {
  async function runGemini(dir: string, task: string): Promise<{ run: AgentRun; server: WireServer }> {
    const server = await startGeminiServer(geminiScript, "gemini-3.1-pro-preview");
    const home = mkdtempSync(join(tmpdir(), "rein-gemini-home-"));
    mkdirSync(join(home, ".gemini"), { recursive: true });
    // An API key (any value) against the scripted server; folder trust off so the project's hooks load.
    writeFileSync(
      join(home, ".gemini", "settings.json"),
      JSON.stringify({
        security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: false } },
        general: { disableAutoUpdate: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
      }),
    );
    try {
      const run = await runAgent(process.execPath, [geminiBundle(), "-p", `task:${task}`, "--yolo"], dir, {
        HOME: home,
        GEMINI_API_KEY: "test-key",
        GOOGLE_GEMINI_BASE_URL: server.origin,
        GEMINI_CLI_NO_RELAUNCH: "1",
      });
      return { run, server };
    } finally {
      await server.close();
    }
  }

  const functionResponses = (server: WireServer) =>
    server.requests.map(bodyText).filter((text) => text.includes("functionResponse"));

  it("denies the touch in `echo ok; touch marker` (BeforeTool) and the model is told the rule's reason", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "gemini");
    const { run, server } = await runGemini(dir, "compound");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(existsSync(join(dir, "marker"))).toBe(false);
    expect(functionResponses(server).join("\n")).toContain(
      "Rein (policy:no-touch): no new files from the shell",
    );
    const [session] = await sessionsOf(dir);
    const shown = await rein(["sessions", "show", (session as { id: string }).id], dir, {
      env: { REIN_TRUST_PROJECT: "" },
    });
    expect(shown.stdout).toContain("gemini session");
    expect(shown.stdout).toContain("denied by policy:no-touch");
  }, 120_000);

  it("lets an allowed call really run", async () => {
    const dir = hookProject();
    await trustAndInstall(dir, "gemini");
    // Gemini CLI refuses `$((...))` itself; brace expansion shows a real shell ran it.
    const { run, server } = await runGemini(dir, "braces");
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(functionResponses(server).join("\n")).toContain("rein-1 rein-2 rein-3");
  }, 120_000);
});
