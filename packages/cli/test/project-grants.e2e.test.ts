/**
 * "Always allow in this project" through the built binary: answered at a real
 * permission prompt (a pseudo-terminal from `script`), written to the local
 * layer (.rein/local.json), and honoured by a new process without a terminal -
 * for exactly the command prefix the prompt showed, and only while its
 * signature holds.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cacheRoot, cleanup, project, REIN_BIN, rein } from "./support/rein-process.js";

afterAll(cleanup);

const hasScript = spawnSync("script", ["--version"]).status === 0;

const CONFIG = `import { defineConfig } from "@rein/sdk";
export default defineConfig({
  model: { script: ["unused"] },
  plugins: [["@rein/tools-shell", { sandbox: { mode: "off" } }], "@rein/plugin-permissions"],
});
`;

const bashCalls = (...commands: string[]) =>
  JSON.stringify([{ toolCalls: commands.map((command) => ({ name: "bash", args: { command } })) }, "done"]);

const shellQuote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;

/** Runs rein on a pseudo-terminal; answers the first permission prompt with `answer`. */
function reinOnTerminal(args: string[], cwd: string, env: Record<string, string>, answer: string) {
  const command = [process.execPath, REIN_BIN, ...args].map(shellQuote).join(" ");
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      cwd,
      env: { ...process.env, NO_COLOR: "1", REIN_CACHE_DIR: cacheRoot, ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    let answered = false;
    child.stdout.on("data", (chunk) => {
      screen += chunk;
      if (!answered && screen.includes("[n] deny")) {
        answered = true;
        child.stdin.write(`${answer}\n`);
      }
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, screen }));
  });
}

interface Decision {
  type: string;
  decision: string;
  toolCallId: string;
  reason?: string;
}
const decisionsOf = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Decision)
    .filter((event) => event.type === "tool_decision")
    .map((event) => [event.decision, event.reason ?? ""] as const);

describe.skipIf(!hasScript)("project grants", { timeout: 90_000 }, () => {
  it("a grant answered at the prompt is saved to .rein/local.json and holds in a new process", async () => {
    const home = mkdtempSync(join(tmpdir(), "rein-home-"));
    const env = { XDG_CONFIG_HOME: home, REIN_MANAGED_CONFIG: join(home, "none.json"), REIN_CONFIG_DIR: "" };
    const dir = project({
      "rein.config.ts": CONFIG,
      "first.json": bashCalls("echo hello world"),
      "second.json": bashCalls("echo hello again", "echo hello x; echo bye", "FOO=1 echo hello"),
    });

    const first = await reinOnTerminal(["run", "--script", "first.json", "go"], dir, env, "a");
    expect(first.code).toBe(0);
    // The prompt names the scope and where it is kept.
    expect(first.screen).toContain(
      "[a] always in this project (bash(echo hello *); saved in .rein/local.json)",
    );
    expect(first.screen).toContain("hello world");
    const local = JSON.parse(readFileSync(join(dir, ".rein/local.json"), "utf8")) as {
      plugins: [
        string,
        { projectGrants: { scope: string; commands: { argv: string[] }[]; mac: string }[] },
      ][];
    };
    expect(local.plugins).toEqual([
      [
        "@rein/plugin-permissions",
        {
          projectGrants: [
            expect.objectContaining({
              scope: "prefix",
              commands: [expect.objectContaining({ argv: ["echo", "hello"] })],
              mac: expect.stringMatching(/^[0-9a-f]{64}$/),
            }),
          ],
        },
      ],
    ]);

    // A new process, no terminal: the granted prefix runs; anything beyond it is still asked (and denied).
    const second = await rein(["run", "--json", "--script", "second.json", "go"], dir, { env });
    expect(second.code).toBe(0);
    const [again, compound, assigned] = decisionsOf(second.stdout);
    expect(again?.[0]).toBe("allow");
    expect(again?.[1]).toMatch(/^allowed in this project \(granted .*, \.rein\/local\.json\)$/);
    expect(compound?.[0]).toBe("deny");
    expect(assigned?.[0]).toBe("deny");
    expect(second.stdout).toContain("hello again");

    // rein config shows the grant and the file it came from.
    const shown = await rein(["config"], dir, { env });
    expect(shown.stdout).toContain(`projectGrants[0] = {"tool":"bash"`);
    expect(shown.stdout).toContain(`← local (${join(dir, ".rein/local.json")})`);

    // An edited grant (wider prefix) no longer verifies: ignored with a warning, the call asked again.
    writeFileSync(
      join(dir, ".rein/local.json"),
      readFileSync(join(dir, ".rein/local.json"), "utf8").replace('"hello"\n', '"bye"\n'),
    );
    writeFileSync(join(dir, "third.json"), bashCalls("echo bye"));
    const third = await rein(["run", "--json", "--script", "third.json", "go"], dir, { env });
    expect(decisionsOf(third.stdout).map(([decision]) => decision)).toEqual(["deny"]);
    expect(third.stderr).toContain(
      "ignored project grant projectGrants[0]: its signature is missing or wrong",
    );
  });

  it("a grant is bound to its project: copied into another project it is ignored", async () => {
    const home = mkdtempSync(join(tmpdir(), "rein-home-"));
    const env = { XDG_CONFIG_HOME: home, REIN_MANAGED_CONFIG: join(home, "none.json"), REIN_CONFIG_DIR: "" };
    const first = project({ "rein.config.ts": CONFIG, "s.json": bashCalls("echo hi there") });
    const granted = await reinOnTerminal(["run", "--script", "s.json", "go"], first, env, "a");
    expect(granted.code).toBe(0);
    const other = project({
      "rein.config.ts": CONFIG,
      "s.json": bashCalls("echo hi there"),
      ".rein/local.json": readFileSync(join(first, ".rein/local.json"), "utf8"),
    });
    const copied = await rein(["run", "--json", "--script", "s.json", "go"], other, { env });
    expect(decisionsOf(copied.stdout).map(([decision]) => decision)).toEqual(["deny"]);
    expect(copied.stderr).toContain("not written by Rein for");

    // Naming the original project's grants file does not make its signatures valid here:
    // no layer may set grantsFile, so the run stops before any call.
    const local = JSON.parse(readFileSync(join(first, ".rein/local.json"), "utf8")) as {
      plugins: [string, Record<string, unknown>][];
    };
    const entry = local.plugins[0] as [string, Record<string, unknown>];
    entry[1].grantsFile = join(first, ".rein/local.json");
    writeFileSync(join(other, ".rein/local.json"), JSON.stringify(local));
    writeFileSync(join(other, "s.json"), bashCalls("echo hi there > marker"));
    const pointed = await rein(["run", "--json", "--script", "s.json", "go"], other, { env });
    expect(pointed.code).toBe(2);
    expect(pointed.stderr).toContain(
      `${join(other, ".rein/local.json")}: permissions: "grantsFile" is set by Rein (the project's .rein/local.json); a config layer cannot point project grants elsewhere`,
    );
    expect(existsSync(join(other, "marker"))).toBe(false);
  });
});
