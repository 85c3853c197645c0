/**
 * `rein run` exits as soon as the run is over (prompt-exit.ts): a handle a plugin left
 * open (a 60 s timer here) no longer holds the process, and nothing the run owns is
 * cut: the session file is complete and its lock released, the whole answer reached
 * stdout through a pipe, and `process.on("exit")` handlers still ran.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, rein, scriptedConfig, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

const LINGERING_PLUGIN = `import { definePlugin } from "@rein/sdk";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export default definePlugin({
  name: "lingering",
  setup(rein) {
    // A handle nothing ever closes: Node alone would keep the process for a minute.
    setTimeout(() => writeFileSync(join(rein.config.cwd, "timer-fired"), "late"), 60_000);
    process.on("exit", () => writeFileSync(join(rein.config.cwd, "exit-handler-ran"), "yes"));
  },
});
`;

describe("prompt exit after `rein run`", { timeout: 60_000 }, () => {
  it("exits without waiting for a handle a plugin left open; the session is complete and unlocked, stdout whole", async () => {
    const answer = `${"x".repeat(199_999)}!`; // larger than a pipe's buffer
    const dir = project({
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "echo", args: { text: "hi" } }] }, answer],
        'plugins: ["./tools.ts", "./lingering.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
      "lingering.ts": LINGERING_PLUGIN,
    });
    const started = performance.now();
    const result = await rein(["run", "say hi"], dir);
    const elapsed = performance.now() - started;
    expect(result.stderr).not.toContain("rein:");
    expect(result.code).toBe(0);
    expect(elapsed).toBeLessThan(30_000);
    expect(result.stdout).toContain(answer);
    expect(existsSync(join(dir, "exit-handler-ran"))).toBe(true);
    expect(existsSync(join(dir, "timer-fired"))).toBe(false);

    const sessions = join(dir, ".rein/sessions");
    const files = readdirSync(sessions);
    expect(files.filter((name) => name.endsWith(".lock"))).toEqual([]);
    const [file] = files.filter((name) => name.endsWith(".jsonl"));
    const lines = readFileSync(join(sessions, file as string), "utf8").split("\n");
    expect(lines.at(-1)).toBe(""); // whole lines only
    const messages = lines
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { type: string; message?: { role: string; content: unknown } })
      .filter((entry) => entry.type === "message");
    expect(messages.map((entry) => entry.message?.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "assistant",
    ]);
    expect(JSON.stringify(messages.at(-1)?.message?.content)).toContain(answer);
  });

  it("a failed run exits promptly too, with its exit code", async () => {
    const dir = project({
      // The script ends after the tool call: the second model request fails the run.
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "echo", args: { text: "hi" } }] }],
        'plugins: ["./tools.ts", "./lingering.ts"],',
      ),
      "tools.ts": TOOLS_PLUGIN,
      "lingering.ts": LINGERING_PLUGIN,
    });
    const started = performance.now();
    const result = await rein(["run", "say hi"], dir);
    expect(performance.now() - started).toBeLessThan(30_000);
    expect(result.stderr).toContain("echo: hi");
    expect(result.code).toBe(1);
    expect(existsSync(join(dir, "exit-handler-ran"))).toBe(true);
    expect(readdirSync(join(dir, ".rein/sessions")).filter((name) => name.endsWith(".lock"))).toEqual([]);
  });
});
