/**
 * `rein replay` with state, through the built binary: the recorded runs go through
 * the configured stack in order, so a budget spent in the record is spent in the
 * replay; `--isolated` decides each call alone and so reports the difference.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, REIN_BIN, rein, TOOLS_PLUGIN } from "./support/rein-process.js";

afterAll(cleanup);

const repo = join(REIN_BIN, "..", "..", "..", "..");
const dist = (pkg: string) => join(repo, "packages", "plugins", pkg, "dist", "index.js");

const echo = (n: number) => ({ toolCalls: [{ name: "echo", args: { text: `call ${n}` } }] });

const guardConfig = (limits: string) => `import { defineConfig } from "@rein/sdk";
import guard from ${JSON.stringify(dist("plugin-guard"))};
export default defineConfig({
  model: { script: ${JSON.stringify([echo(1), echo(2), echo(3), echo(4), echo(5), "done"])} },
  plugins: ["./tools.ts", [guard, ${limits}]],
});
`;

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));

describe("rein replay with state", { timeout: 120_000 }, () => {
  it("a run whose tool-call budget denied the fifth call replays with zero changes; --isolated reports the fifth", async () => {
    const dir = project({
      "rein.config.ts": guardConfig("{ perRun: { maxToolCalls: 4 } }"),
      "tools.ts": TOOLS_PLUGIN,
    });
    const ran = await rein(["run", "echo five times"], dir);
    // The guard stops the run at the fifth call: an aborted run exits 1.
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("denied by guard:max-tool-calls");
    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();
    const id = summary?.id as string;

    const stateful = await rein(["replay", "--json", id], dir);
    expect(stateful.code, stateful.stderr).toBe(0);
    const lines = jsonLines(stateful.stdout);
    expect(lines.map((l) => [l.tool, l.recorded, l.now, l.changed])).toEqual([
      ["echo", "allow", "allow", false],
      ["echo", "allow", "allow", false],
      ["echo", "allow", "allow", false],
      ["echo", "allow", "allow", false],
      ["echo", "deny", "deny", false],
    ]);
    expect(lines[4]).toMatchObject({
      recordedBy: "guard:max-tool-calls",
      by: "guard:max-tool-calls",
      args: { text: "call 5" },
    });
    expect(lines[4].reason).toContain("run budget exhausted: 4 of max 4 tool calls used");
    const text = await rein(["replay", id], dir);
    expect(text.code).toBe(0);
    expect(text.stderr).toContain("5 tool calls replayed, 0 changed");
    expect(text.stdout).not.toContain("CHANGED");

    const isolated = await rein(["replay", "--isolated", "--json", id], dir);
    expect(isolated.code, isolated.stderr).toBe(1);
    const alone = jsonLines(isolated.stdout);
    expect(alone.map((l) => [l.now, l.changed])).toEqual([
      ["allow", false],
      ["allow", false],
      ["allow", false],
      ["allow", false],
      ["allow", true],
    ]);
    expect(alone[4]).toMatchObject({
      recorded: "deny",
      recordedBy: "guard:max-tool-calls",
      by: "harness:default",
    });
    const isolatedText = await rein(["replay", "--isolated", id], dir);
    expect(isolatedText.code).toBe(1);
    expect(isolatedText.stdout).toMatch(/CHANGED #5 echo .*recorded deny → now allow by harness:default/);
    expect(isolatedText.stderr).toContain("5 tool calls replayed (isolated), 1 changed");
  });

  it("a loosened budget lets the replayed run go past the record: changed, exit 1", async () => {
    const dir = project({
      "rein.config.ts": guardConfig("{ perRun: { maxToolCalls: 4 } }"),
      "tools.ts": TOOLS_PLUGIN,
    });
    expect((await rein(["run", "echo five times"], dir)).code).toBe(1);
    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();
    const id = summary?.id as string;
    writeFileSync(join(dir, "rein.config.ts"), guardConfig("{ perRun: { maxToolCalls: 10 } }"));
    const loosened = await rein(["replay", id], dir);
    expect(loosened.code).toBe(1);
    expect(loosened.stdout).toMatch(/CHANGED #5 echo .*recorded deny → now allow/);
    expect(loosened.stderr).toContain("run 1 went on past the record");
    expect(loosened.stderr).toContain("5 tool calls replayed, 1 changed");
  });
});
