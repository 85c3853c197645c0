/**
 * `rein` in pipelines and scripts, through the built binary: a reader that goes
 * away (`| head`, `| grep -m1`) ends the command quietly, a run is aborted cleanly
 * with its session intact; `--json` stdout carries only JSON even when a plugin
 * prints; a scripted model resumed with `--continue` goes on where it left off.
 */
import { join } from "node:path";
import { SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig, spawnRein, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

/** Reports progress every 20 ms until aborted: a run that keeps writing events. */
const TICK_PLUGIN = `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({ name: "tick", setup(rein) {
  rein.registerTool(defineTool({ name: "tick", description: "Ticks until aborted", parameters: Type.Object({}), risk: "read",
    execute: (_args, ctx) => new Promise((resolve) => {
      const timer = setInterval(() => ctx.update({ content: [{ type: "text", text: "tick" }] }), 20);
      ctx.signal.addEventListener("abort", () => { clearInterval(timer); resolve({ content: [{ type: "text", text: "stopped" }], isError: true }); });
    }) }));
} });
`;

/** Prints through every console method and process.stdout, at load, in setup and in a gate. */
const NOISY_PLUGIN = `import { definePlugin } from "@rein/sdk";
console.log("noisy: module loaded");
export default definePlugin({ name: "noisy", setup(rein) {
  console.info("noisy: setup");
  process.stdout.write("noisy: raw write\\n");
  rein.hooks.toolGate.tapPromise("noisy", async () => { console.debug("noisy: gate"); console.log("noisy: log"); return undefined; });
} });
`;

const sessionsIn = (dir: string) => new SessionStore(join(dir, ".rein/sessions"));
const NO_STACK = /^\s+at |EPIPE|Unhandled/m;

/** Runs rein with its stdout's reader already gone (`rein ... | true`). */
function intoClosedPipe(args: string[], dir: string) {
  return new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawnRein(args, dir);
    child.stdout?.destroy();
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
    child.stdin?.end();
  });
}

/** Every tool call on the session's branch has its result. */
function consistent(dir: string) {
  const store = sessionsIn(dir);
  const [summary] = store.list();
  const session = store.open(summary?.id as string); // also proves the lock was released
  const messages = session.buildContext().messages;
  session.close();
  const calls = messages.flatMap((m) =>
    m.role === "assistant" ? m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])) : [],
  );
  const results = messages.flatMap((m) => (m.role === "toolResult" ? [m.toolCallId] : []));
  return { calls, results };
}

describe("a closed reader (EPIPE)", { timeout: 90_000 }, () => {
  it("models, tools and sessions list into a closed pipe exit 0 without a stack", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["hi"], 'plugins: ["./tools.ts"],'),
      "tools.ts": TOOLS_PLUGIN,
    });
    expect((await rein(["run", "hi"], dir)).code).toBe(0);
    for (const args of [["models"], ["tools"], ["tools", "--json"], ["sessions", "list"]]) {
      const result = await intoClosedPipe(args, dir);
      expect(result.stderr, args.join(" ")).not.toMatch(NO_STACK);
      expect(result.code, args.join(" ")).toBe(0);
    }
  });

  it("run --json | grep -m1 tool_decision: the run is aborted cleanly, the session reopens and --continue works", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "tick", args: {} }] }, "resumed where it stopped"],
        'plugins: ["./tick.ts"],',
      ),
      "tick.ts": TICK_PLUGIN,
    });
    const child = spawnRein(["run", "--json", "tick"], dir);
    child.stdin?.end();
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    let seen = "";
    await new Promise<void>((resolve) => {
      child.stdout?.on("data", (chunk) => {
        seen += chunk;
        if (seen.includes('"type":"tool_execution_update"')) {
          child.stdout?.destroy(); // the reader goes away mid-run
          resolve();
        }
      });
    });
    expect(await closed).toBe(1); // the run was aborted, not completed
    expect(stderr).not.toMatch(NO_STACK);
    const { calls, results } = consistent(dir);
    expect(calls).toHaveLength(1);
    expect(results).toEqual(calls);

    const resumed = await rein(["run", "--continue", "go on"], dir);
    expect(resumed.stderr).not.toContain("rein:");
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("resumed where it stopped");
  });
});

describe("--json keeps stdout for JSON", { timeout: 90_000 }, () => {
  it("a plugin's console.log/info/debug and process.stdout.write go to stderr in run, plugins and tools", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "echo", args: { text: "x" } }] }, "ok"],
        'plugins: ["./tools.ts", "./noisy.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
      "noisy.ts": NOISY_PLUGIN,
    });
    const run = await rein(["run", "--json", "go"], dir);
    expect(run.code).toBe(0);
    const events = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(events.map((e) => e.type).slice(-2)).toEqual(["settled", "end"]);
    for (const text of ["module loaded", "setup", "raw write", "gate", "noisy: log"]) {
      expect(run.stderr).toContain(`noisy: ${text.replace("noisy: ", "")}`);
    }
    expect(run.stdout).not.toContain("noisy:");

    for (const command of ["plugins", "tools"]) {
      const result = await rein([command, "--json"], dir);
      expect(result.code).toBe(0);
      expect(() => JSON.parse(result.stdout), result.stdout).not.toThrow();
      expect(result.stderr).toContain("noisy: module loaded");
      expect(result.stderr).toContain("noisy: raw write");
    }
  });
});

describe("rein plugins text", { timeout: 60_000 }, () => {
  it("shows each tap with its stage, and a tool pack by its specifier", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["hi"], 'plugins: ["./tools.ts", "./noisy.ts"],'),
      "tools.ts": `import { defineTool, Type } from "@rein/sdk";
export default [defineTool({ name: "t", description: "x", parameters: Type.Object({}), risk: "read", execute: async () => ({ content: [] }) })];
`,
      "noisy.ts": NOISY_PLUGIN,
    });
    const result = await rein(["plugins"], dir);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("taps toolGate stage 0");
    expect(result.stdout).toMatch(/^\.\/tools\.ts {2}\(tool-pack\)$/m);
  });
});

describe("resuming a scripted model, as the footer says", { timeout: 90_000 }, () => {
  it("an exhausted script's footer names a command that works, and an explicit --script wins on --continue", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(["first answer"], ""),
      "more.json": JSON.stringify(["from the new script", "never reached"]),
    });
    const first = await rein(["run", "hello"], dir);
    expect(first.code, first.stderr).toBe(0);
    // Printing `resume with rein run --continue` here would send people into "No more faux responses queued".
    expect(first.stderr).toContain(
      "the script has no replies left: resume with rein run --continue --script <replies.json>",
    );
    const resumed = await rein(["run", "--continue", "--script", "more.json", "and then?"], dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    // The file's first reply, not one skipped for the reply the session already holds.
    expect(resumed.stdout).toContain("from the new script");
    expect(resumed.stderr).toMatch(/ · resume with rein run --continue\n/);
    // One session, resumed: hello, its answer, the follow-up, the new script's answer.
    expect(
      sessionsIn(dir)
        .list()
        .map((summary) => summary.messageCount),
    ).toEqual([4]);
  });
});
