/**
 * A hook is pinned to its project (hook/pinned-project.ts): the model can move
 * the agent's working directory out of the project (`cd` persists across Claude
 * Code's Bash calls), and the project's rules must still decide every call. The
 * table runs `rein hook <agent>` as the agent does (a process, the event on
 * stdin, the warm daemon off and on); the last case drives the real Claude Code
 * 2.1.332 offline: `cd` into another, trusted project with no rules, then a
 * command the pinned project denies.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeBinary } from "../support/agent-binaries.js";
import { cacheRoot, cleanup, machineEnv, project, rein } from "../support/rein-process.js";
import { startAnthropicServer } from "../support/wire/anthropic-messages.js";
import type { CapturedRequest, WireTurn } from "../support/wire/recording-server.js";

afterAll(cleanup);

const repo = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");
const dist = (pkg: string) => JSON.stringify(join(repo, "packages", "plugins", pkg, "dist", "index.js"));
const HOOK_BIN = join(repo, "packages", "cli", "bin", "rein-hook.js");
const USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };

const PINNED = `import { defineConfig } from "@rein/sdk";
import policy from ${dist("plugin-policy")};

export default defineConfig({
  model: { script: [] },
  plugins: [
    [policy, { rules: [
      { id: "cd", rule: "bash(cd *)", decision: "allow", reason: "moving around is harmless" },
      { id: "no-touch", rule: "bash(touch *)", decision: "deny", reason: "no new files from the shell" },
    ] }],
  ],
});
`;
/** Another project of the same user, trusted, with no rules at all. */
const LOOSE = `import { defineConfig } from "@rein/sdk";
export default defineConfig({ model: { script: [] } });
`;

const env = {
  ...machineEnv,
  REIN_TRUST_PROJECT: "",
  REIN_CACHE_DIR: cacheRoot,
  REIN_HOOK_DAEMON_IDLE_MS: "20000",
};

let pinned = "";
let loose = "";
let linkedIn = "";
beforeAll(async () => {
  pinned = realpathSync(project({ "rein.config.ts": PINNED }));
  loose = realpathSync(project({ "rein.config.ts": LOOSE }));
  mkdirSync(join(pinned, "src"));
  // A folder outside the project whose real path is inside it.
  linkedIn = join(loose, "into-pinned");
  symlinkSync(join(pinned, "src"), linkedIn);
  for (const dir of [pinned, loose]) {
    const trusted = await rein(["trust", "--yes"], dir, { env: { REIN_TRUST_PROJECT: "" } });
    expect(trusted.code, trusted.stderr).toBe(0);
  }
}, 60_000);

interface HookRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `rein-hook.js hook <agent> ...args` with one event on stdin, as an agent runs it. */
function hook(
  args: string[],
  event: Record<string, unknown>,
  extraEnv: Record<string, string>,
): Promise<HookRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--liftoff-only", HOOK_BIN, "hook", ...args], {
      cwd: String(event.cwd),
      env: { ...process.env, ...env, CLAUDE_PROJECT_DIR: "", GEMINI_PROJECT_DIR: "", ...extraEnv },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(event));
  });
}

const touchIn = (cwd: string) => ({
  hook_event_name: "PreToolUse",
  session_id: "pinned-test",
  cwd,
  tool_name: "Bash",
  tool_input: { command: "touch marker" },
});

/** What the hook said about the call: deny (exit 2 or a deny answer), or none (the agent decides). */
function verdict(run: HookRun): "deny" | "none" | string {
  if (run.code === 2) return "deny";
  if (run.code !== 0) return `exit ${run.code}: ${run.stderr}`;
  if (run.stdout.trim() === "") return "none";
  const answer = JSON.parse(run.stdout) as { hookSpecificOutput?: { permissionDecision?: string } };
  return answer.hookSpecificOutput?.permissionDecision ?? "none";
}

interface Attack {
  name: string;
  args: () => string[];
  cwd: () => string;
  env?: () => Record<string, string>;
  expected: "deny" | "none";
  /** false: the pin itself is refused, so no daemon ever starts for it. */
  pinValid?: false;
}

const ATTACKS: Attack[] = [
  {
    name: "cd into another trusted project, pinned by --project",
    args: () => ["claude-code", "--project", pinned],
    cwd: () => loose,
    expected: "deny",
  },
  {
    name: "cd into another trusted project, pinned by $CLAUDE_PROJECT_DIR (a --user install)",
    args: () => ["claude-code"],
    cwd: () => loose,
    env: () => ({ CLAUDE_PROJECT_DIR: pinned }),
    expected: "deny",
  },
  {
    name: "cd into another trusted project, Gemini pinned by $GEMINI_PROJECT_DIR",
    args: () => ["gemini"],
    cwd: () => loose,
    env: () => ({ GEMINI_PROJECT_DIR: pinned }),
    expected: "deny",
  },
  {
    name: "--project wins over a $CLAUDE_PROJECT_DIR naming the loose project",
    args: () => ["claude-code", "--project", pinned],
    cwd: () => loose,
    env: () => ({ CLAUDE_PROJECT_DIR: loose }),
    expected: "deny",
  },
  {
    name: "cd into a subfolder of another project that is a symlink into the pinned one",
    args: () => ["claude-code", "--project", pinned],
    cwd: () => linkedIn,
    expected: "deny",
  },
  {
    name: "cd into /tmp-like folder with no config (still the pinned rules, not a trust refusal)",
    args: () => ["claude-code", "--project", pinned],
    cwd: () => mkdtempSync(join(tmpdir(), "rein-outside-")),
    expected: "deny",
  },
  {
    name: "a relative --project (the hook's own cwd moves with the agent's) is refused",
    args: () => ["claude-code", "--project", "."],
    cwd: () => loose,
    expected: "deny",
    pinValid: false,
  },
  {
    name: "a --project that no longer exists is refused, not replaced by the event's cwd",
    args: () => ["claude-code", "--project", join(pinned, "gone")],
    cwd: () => loose,
    expected: "deny",
    pinValid: false,
  },
  {
    name: "control: unpinned, the loose project's (empty) stack decides in the loose project",
    args: () => ["claude-code"],
    cwd: () => loose,
    expected: "none",
  },
  {
    name: "control: pinned to the loose project, a call in the loose project is the agent's",
    args: () => ["claude-code", "--project", loose],
    cwd: () => loose,
    expected: "none",
  },
];

describe("a hook pinned to its project decides with that project's rules wherever the agent's cwd went", () => {
  for (const daemon of ["off", "on"] as const) {
    for (const attack of ATTACKS) {
      it(`${attack.name} (daemon ${daemon})`, async () => {
        const cwd = attack.cwd();
        const extra = {
          ...(attack.env?.() ?? {}),
          REIN_HOOK_DAEMON: daemon === "off" ? "off" : "on",
          REIN_HOOK_DAEMON_TRACE: "1",
        };
        // With the daemon: the first call starts it; then until one is answered warm (a bad pin never is).
        const warm = daemon === "on" && attack.pinValid !== false;
        for (let round = 0; ; round++) {
          const run = await hook(attack.args(), touchIn(cwd), extra);
          expect(verdict(run), `round ${round}: ${run.stderr}`).toBe(attack.expected);
          if (attack.expected === "deny" && run.code === 0)
            expect(run.stdout).toContain("no new files from the shell");
          const answeredWarm = run.stderr.includes("answered by the daemon");
          if (!warm) {
            expect(answeredWarm).toBe(false);
            if (daemon === "off" || round >= 1) break;
          } else if (answeredWarm) break;
          expect(round, "the daemon never answered").toBeLessThan(8);
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      }, 90_000);
    }
  }
});

/** The model's calls: leave the project, show where it is, then a call the project denies; then a closing answer. */
function leaveThenTouch(outside: string) {
  return (request: CapturedRequest): WireTurn => {
    const body = request.body as { messages?: { content: unknown }[]; tools?: { name: string }[] };
    if (!body?.tools?.some((tool) => tool.name === "Bash")) return { text: "done", usage: USAGE };
    const results = JSON.stringify(body.messages ?? []).split('"tool_result"').length - 1;
    const command = [`cd ${outside}`, 'echo "at:$(pwd)"', "touch marker"][results];
    if (command === undefined) return { text: "done", usage: USAGE };
    return {
      toolCall: { id: `toolu_${results}_${Date.now()}`, name: "Bash", args: { command, description: "go" } },
      usage: USAGE,
    };
  };
}

describe("Claude Code 2.1.332: a cd out of the project does not take its rules off", () => {
  it("after `cd <another trusted project>`, `touch marker` is still denied by the pinned project's rule", async () => {
    const installed = await rein(["hook", "install", "claude-code"], pinned, {
      env: { REIN_TRUST_PROJECT: "" },
    });
    expect(installed.code, installed.stderr).toBe(0);
    const settings = readFileSync(join(pinned, ".claude", "settings.json"), "utf8");
    expect(settings).toContain(`--project ${pinned}`);
    const server = await startAnthropicServer(leaveThenTouch(loose), "claude-sonnet-4-5");
    const home = mkdtempSync(join(tmpdir(), "rein-claude-home-"));
    let result: HookRun;
    try {
      result = await new Promise<HookRun>((resolve, reject) => {
        const clean = Object.fromEntries(
          Object.entries(process.env).filter(([key]) => !/^(ANTHROPIC|OPENAI|CLAUDE|CODEX)_/.test(key)),
        );
        const child = spawn(
          claudeBinary(),
          // --add-dir: a folder the session may work in, where a `cd` stays (out of every other
          // folder Claude Code resets the shell to the project: "Shell cwd was reset to ...").
          [
            "-p",
            "task:leave",
            "--permission-mode",
            "bypassPermissions",
            "--model",
            "claude-sonnet-4-5",
            "--add-dir",
            loose,
          ],
          {
            cwd: pinned,
            env: {
              ...clean,
              ...env,
              HOME: home,
              CLAUDE_CONFIG_DIR: join(home, ".claude"),
              ANTHROPIC_BASE_URL: server.origin,
              ANTHROPIC_API_KEY: "sk-test",
              DISABLE_TELEMETRY: "1",
              DISABLE_AUTOUPDATER: "1",
              DISABLE_ERROR_REPORTING: "1",
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
              IS_SANDBOX: "1",
            },
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk) => {
          stdout += chunk;
        });
        child.stderr.on("data", (chunk) => {
          stderr += chunk;
        });
        const timer = setTimeout(() => child.kill("SIGKILL"), 100_000);
        child.on("error", reject);
        child.on("close", (code) => {
          clearTimeout(timer);
          resolve({ code, stdout, stderr });
        });
      });
      // What Claude Code told the model each tool call gave (the last request holds them all).
      const messages =
        (server.requests.at(-1)?.body as { messages?: { content: unknown }[] })?.messages ?? [];
      const told = messages
        .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
        .filter((block: { type?: string }) => block.type === "tool_result")
        .map((block: { content?: unknown }) => JSON.stringify(block.content))
        .join("\n");
      expect(result.code, result.stderr + result.stdout).toBe(0);
      // The first call really left the project (Claude Code keeps the cd) ...
      expect(told, told).toContain(`at:${loose}`);
      // ... and the second, decided with the pinned project's rules, never ran there.
      expect(told, told).toContain("Rein (policy:no-touch): no new files from the shell");
      expect(existsSync(join(loose, "marker"))).toBe(false);
      expect(existsSync(join(pinned, "marker"))).toBe(false);
    } finally {
      await server.close();
    }
  }, 150_000);
});
