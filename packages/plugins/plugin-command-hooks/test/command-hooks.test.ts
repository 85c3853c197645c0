/**
 * Hooks written for Claude Code, run inside Rein: real bash and node hook
 * scripts (child processes reading the event's JSON on stdin) and a real
 * HTTP hook on 127.0.0.1, on a real harness run with a scripted model. Deny
 * by exit 2, deny by JSON, updated input (re-validated), a crash and a
 * timeout (both fail closed), the result rewritten, a stop blocked, a prompt
 * blocked, hooks read from an agent settings file.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineTool, type PluginHostEntry, Type } from "@rein/sdk";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import commandHooks, {
  CommandHookErrorCode,
  type CommandHooksOptions,
  isCommandHookError,
} from "../src/index.js";

const executed: string[] = [];
const bash = defineTool({
  name: "bash",
  description: "Run a shell command",
  risk: "exec",
  parameters: Type.Object({ command: Type.String() }),
  execute: (args) => {
    executed.push(args.command);
    return { content: [{ type: "text", text: `ran ${args.command} SECRET-123` }] };
  },
});

const dir = mkdtempSync(join(tmpdir(), "rein-command-hooks-"));
function script(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text, { mode: 0o755 });
  return file;
}

/** bash: denies any command containing "rm" by exit 2, reason on stderr. */
const DENY_EXIT_2 = script(
  "deny-rm.sh",
  `#!/usr/bin/env bash
input=$(cat)
cmd=$(node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).tool_input.command))' <<<"$input")
if [[ "$cmd" == *rm* ]]; then echo "rm is not allowed here" >&2; exit 2; fi
exit 0
`,
);

/** node: denies by JSON (Claude Code's hookSpecificOutput) when the command pushes. */
const DENY_JSON = script(
  "deny-push.mjs",
  `let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const input = JSON.parse(s);
  if (input.hook_event_name !== "PreToolUse" || input.tool_name !== "Bash") process.exit(1);
  if (input.tool_input.command.includes("git push"))
    console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "pushes are reviewed" } }));
});
`,
);

/** node: rewrites the command (adds --dry-run) and allows it. */
const REWRITE = script(
  "dry-run.mjs",
  `let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const input = JSON.parse(s);
  const command = input.tool_input.command + " --dry-run";
  console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", permissionDecisionReason: "dry runs only", updatedInput: { command } } }));
});
`,
);

const node = (file: string) => `node ${file}`;
const call = (command: string) => ({ toolCalls: [{ name: "bash", args: { command } }] });
const pre = (command: string, extra: Record<string, unknown> = {}) => ({
  PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command, ...extra }] }],
});

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  executed.length = 0;
});

async function harness(options: Partial<CommandHooksOptions>, steps: Parameters<TestHarness["script"]>) {
  const entry: PluginHostEntry = [commandHooks, options];
  t = await createTestHarness({ plugins: [entry], tools: [bash], script: steps });
  return t;
}

describe("PreToolUse hooks on toolCall + toolGate", () => {
  it("a bash hook's exit 2 denies, with its stderr as the reason", async () => {
    const h = await harness({ hooks: pre(`bash ${DENY_EXIT_2}`) }, [
      call("rm -rf build"),
      call("ls"),
      "done",
    ]);
    await h.prompt("go");
    expect(executed).toEqual(["ls"]);
    expect(h.decisions().map((d) => [d.decision, d.by, d.reason])).toEqual([
      ["deny", "command-hooks:PreToolUse", "rm is not allowed here"],
      ["allow", "harness:default", expect.any(String)],
    ]);
  });

  it("a node hook's JSON permissionDecision deny denies with its reason", async () => {
    const h = await harness({ hooks: pre(node(DENY_JSON)) }, [call("git push origin main"), "done"]);
    await h.prompt("go");
    expect(executed).toEqual([]);
    expect(h.decisions()[0]).toMatchObject({
      decision: "deny",
      by: "command-hooks:PreToolUse",
      reason: "pushes are reviewed",
    });
  });

  it("updatedInput rewrites the call (validated again) and the allow stands", async () => {
    const h = await harness({ hooks: pre(node(REWRITE)) }, [call("make deploy"), "done"]);
    await h.prompt("go");
    expect(executed).toEqual(["make deploy --dry-run"]);
    expect(h.decisions()[0]).toMatchObject({
      decision: "allow",
      by: "command-hooks:PreToolUse",
      reason: "dry runs only",
    });
  });

  it("an updatedInput with a field the tool does not take is refused: the call is denied", async () => {
    const bad = script(
      "bad-update.mjs",
      `process.stdin.resume(); process.stdin.on("end", () => console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "ls", shell: "zsh" } } })));`,
    );
    const h = await harness({ hooks: pre(node(bad)) }, [call("ls"), "done"]);
    await h.prompt("go");
    expect(executed).toEqual([]);
    expect(h.decisions()[0]?.reason).toContain('"shell"');
  });

  it("a hook that crashes (exit 1) fails closed: denied, naming the hook", async () => {
    const crash = script("crash.sh", "#!/usr/bin/env bash\necho 'unexpected' >&2\nexit 1\n");
    const h = await harness({ hooks: pre(`bash ${crash}`) }, [call("ls"), "done"]);
    await h.prompt("go");
    expect(executed).toEqual([]);
    const decision = h.decisions()[0];
    expect(decision).toMatchObject({ decision: "deny", by: "command-hooks:PreToolUse" });
    expect(decision?.reason).toContain("exit 1: unexpected");
    expect(decision?.reason).toContain("failing closed");
  });

  it("a hook that hangs past its timeout is killed and fails closed", async () => {
    const hang = script("hang.sh", "#!/usr/bin/env bash\nsleep 30\n");
    const began = Date.now();
    const h = await harness({ hooks: pre(`bash ${hang}`, { timeout: 0.5 }) }, [call("ls"), "done"]);
    await h.prompt("go");
    expect(Date.now() - began).toBeLessThan(10_000);
    expect(executed).toEqual([]);
    expect(h.decisions()[0]?.reason).toContain("did not answer within 0.5 s");
  });

  it("onFailure: continue lets a crashed hook's call go on (and logs it)", async () => {
    const crash = script("crash2.sh", "#!/usr/bin/env bash\nexit 3\n");
    const h = await harness({ hooks: pre(`bash ${crash}`), onFailure: "continue" }, [call("ls"), "done"]);
    await h.prompt("go");
    expect(executed).toEqual(["ls"]);
    expect(h.logs.some((log) => log.message.includes("exit 3"))).toBe(true);
  });

  it("the matcher picks the tools a group runs for", async () => {
    const h = await harness(
      {
        hooks: {
          PreToolUse: [
            { matcher: "Edit|Write", hooks: [{ type: "command", command: `bash ${DENY_EXIT_2}` }] },
          ],
        },
      },
      [call("rm x"), "done"],
    );
    await h.prompt("go");
    expect(executed).toEqual(["rm x"]);
  });
});

describe("http handlers", () => {
  it("POSTs the input and reads a 2xx JSON answer; a 5xx fails closed", async () => {
    const bodies: unknown[] = [];
    let status = 200;
    const server = createServer((req, res) => {
      let s = "";
      req
        .on("data", (d) => (s += d))
        .on("end", () => {
          bodies.push({ body: JSON.parse(s), auth: req.headers.authorization });
          res.writeHead(status, { "content-type": "application/json" });
          res.end(
            JSON.stringify({
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "deny",
                permissionDecisionReason: "http says no",
              },
            }),
          );
        });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
    process.env.HOOK_TOKEN_TEST = "tok";
    try {
      const hooks = {
        PreToolUse: [
          {
            hooks: [
              {
                type: "http",
                url,
                headers: { authorization: "Bearer $HOOK_TOKEN_TEST" },
                allowedEnvVars: ["HOOK_TOKEN_TEST"],
              },
            ],
          },
        ],
      };
      const h = await harness({ hooks }, [call("ls"), "done"]);
      await h.prompt("go");
      expect(h.decisions()[0]).toMatchObject({ decision: "deny", reason: "http says no" });
      expect(bodies[0]).toMatchObject({
        auth: "Bearer tok",
        body: { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } },
      });
      await h.dispose();
      status = 500;
      const h2 = await harness({ hooks }, [call("ls"), "done"]);
      await h2.prompt("go");
      expect(h2.decisions()[0]?.reason).toContain("HTTP 500");
      expect(executed).toEqual([]);
    } finally {
      server.close();
    }
  });
});

describe("PostToolUse, Stop, UserPromptSubmit", () => {
  it("PostToolUse: updatedToolOutput replaces the result the model sees, additionalContext is added", async () => {
    const redact = script(
      "redact.mjs",
      `let s=""; process.stdin.on("data",d=>s+=d).on("end",()=>{ const i=JSON.parse(s); console.log(JSON.stringify({hookSpecificOutput:{hookEventName:"PostToolUse", additionalContext:"checked by redact", updatedToolOutput:{...i.tool_response, stdout:i.tool_response.stdout.replace(/SECRET-\\d+/g,"[redacted]")}}})); });`,
    );
    const h = await harness(
      { hooks: { PostToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: node(redact) }] }] } },
      [call("cat creds"), "done"],
    );
    await h.prompt("go");
    const result = h.messages().find((m) => m.role === "toolResult");
    const text = JSON.stringify(result?.content);
    expect(text).toContain("ran cat creds [redacted]");
    expect(text).not.toContain("SECRET-123");
    expect(text).toContain("checked by redact");
  });

  it("Stop: decision block asks for one more turn with the reason; stop_hook_active stops a loop", async () => {
    const stop = script(
      "stop.mjs",
      `let s=""; process.stdin.on("data",d=>s+=d).on("end",()=>{ const i=JSON.parse(s); if(!i.stop_hook_active) console.log(JSON.stringify({decision:"block", reason:"run the tests first"})); });`,
    );
    const h = await harness({ hooks: { Stop: [{ hooks: [{ type: "command", command: node(stop) }] }] } }, [
      "first answer",
      "second answer",
    ]);
    await h.prompt("go");
    expect(h.requests).toHaveLength(2);
    expect(JSON.stringify(h.requests[1])).toContain("run the tests first");
  });

  it("UserPromptSubmit: exit 2 refuses the prompt before the model is asked", async () => {
    const guard = script(
      "prompt.sh",
      "#!/usr/bin/env bash\ngrep -q password && { echo 'no passwords in prompts' >&2; exit 2; }\nexit 0\n",
    );
    const h = await harness(
      { hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: `bash ${guard}` }] }] } },
      ["never"],
    );
    const outcome = await h.prompt("my password is hunter2");
    expect(h.requests).toHaveLength(0);
    expect(outcome.status).toBe("blocked");
    expect(JSON.stringify(outcome)).toContain("no passwords in prompts");
  });
});

describe("hooks from an agent settings file", () => {
  it("reads .claude/settings.json's hooks, skipping Rein's own entries", async () => {
    const settings = join(dir, "settings.json");
    writeFileSync(
      settings,
      JSON.stringify({
        model: "opus",
        hooks: {
          PreToolUse: [
            { matcher: "Bash", hooks: [{ type: "command", command: `bash ${DENY_EXIT_2}` }] },
            { hooks: [{ type: "command", command: "/usr/bin/node /x/bin/rein.js hook claude-code" }] },
          ],
        },
      }),
    );
    const h = await harness({ settingsFile: settings }, [call("rm a"), "done"]);
    await h.prompt("go");
    expect(h.decisions()[0]).toMatchObject({ decision: "deny", reason: "rm is not allowed here" });
    expect(readFileSync(settings, "utf8")).toContain("opus");
  });

  it("refuses a handler type it cannot run, naming the entry", async () => {
    const error = await harness(
      { hooks: { PreToolUse: [{ hooks: [{ type: "prompt", prompt: "is it safe?" }] }] } },
      [],
    ).catch((e: unknown) => e);
    const cause = (error as { cause?: unknown }).cause ?? error;
    expect(isCommandHookError(cause, CommandHookErrorCode.invalidSettings)).toBe(true);
    expect((cause as Error).message).toContain("hooks.PreToolUse[0].hooks[0]");
  });
});
