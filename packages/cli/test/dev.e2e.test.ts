/**
 * The dev loop through the built binary with piped chat input: `/reload` and
 * `rein dev` (file watching) pick up edited plugins and config between turns,
 * keep the session, and a broken edit keeps the previous plugins (fail closed).
 */
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import { cleanup, project, scriptedConfig, spawnRein } from "./support/rein-process.js";

afterAll(cleanup);

const greeter = (word: string) => `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "greeter",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "greet",
      description: "Greet",
      parameters: Type.Object({}),
      risk: "read",
      execute: async () => ({ content: [{ type: "text", text: "greeting: ${word}" }] }),
    }));
  },
});
`;

const DENY_GREET = `import { definePlugin } from "@rein/sdk";
export default definePlugin({
  name: "no-greet",
  setup(rein) {
    rein.hooks.toolGate.tap("no-greet", (call) =>
      call.name === "greet" ? { decision: "deny", reason: "no greetings today" } : undefined);
  },
});
`;

const SCRIPT = [
  { toolCalls: [{ name: "greet", args: {} }] },
  "done one",
  { toolCalls: [{ name: "greet", args: {} }] },
  "done two",
  { toolCalls: [{ name: "greet", args: {} }] },
  "done three",
];

/** A running chat whose output can be awaited. */
function chat(args: string[], dir: string) {
  const child: ChildProcess = spawnRein(args, dir);
  let stdout = "";
  let stderr = "";
  const waiters: (() => void)[] = [];
  const poke = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
    poke();
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
    poke();
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
  return {
    send: (line: string) => child.stdin?.write(`${line}\n`),
    end: () => child.stdin?.end(),
    exited,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    /** Resolves once `text` appears `times` times in stdout+stderr. */
    async waitFor(text: string, times = 1) {
      const deadline = Date.now() + 30_000;
      while ((stdout + stderr).split(text).length - 1 < times) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${JSON.stringify(text)}\n${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 500);
        });
      }
    },
  };
}

describe("reloading plugins and config in a chat", { timeout: 120_000 }, () => {
  it("/reload picks up an edited plugin and config between turns, in the same session", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(SCRIPT, 'plugins: ["./greeter.ts"],'),
      "greeter.ts": greeter("v1"),
    });
    const session = chat(["run", "--chat"], dir);
    session.send("first");
    await session.waitFor("done one");
    expect(session.stderr).toContain("greeting: v1");

    writeFileSync(join(dir, "greeter.ts"), greeter("v2"));
    session.send("/reload");
    await session.waitFor("↻ reloaded");
    session.send("second");
    await session.waitFor("done two");
    expect(session.stderr).toContain("greeting: v2");

    // A config edit: a new policy plugin joins the stack.
    writeFileSync(join(dir, "no-greet.ts"), DENY_GREET);
    writeFileSync(
      join(dir, "rein.config.ts"),
      scriptedConfig(["unused: the running model is kept"], 'plugins: ["./greeter.ts", "./no-greet.ts"],'),
    );
    session.send("/reload");
    await session.waitFor("↻ reloaded: 2 plugins (greeter, no-greet)");
    await session.waitFor("the model changed in the config: restart to use it");
    session.send("third");
    await session.waitFor("done three");
    expect(session.stderr).toContain("no greetings today");
    session.send("/exit");
    session.end();
    expect(await session.exited).toBe(0);

    const sessions = new SessionStore(join(dir, ".rein/sessions")).list();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]?.messageCount).toBe(12);
  });

  it("a reload keeps the command-line layer: a --deny still holds after /reload", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(SCRIPT, 'plugins: ["./greeter.ts"],'),
      "greeter.ts": greeter("v1"),
    });
    const session = chat(["run", "--chat", "--deny", "greet"], dir);
    session.send("first");
    await session.waitFor("done one");
    expect(session.stderr).toContain("denied by policy:flag-deny-1");
    session.send("/reload");
    await session.waitFor("↻ reloaded: 2 plugins (greeter, policy)");
    session.send("second");
    await session.waitFor("done two");
    expect(session.stderr.split("denied by policy:flag-deny-1").length - 1).toBe(2);
    expect(session.stderr).not.toContain("greeting: v1");
    session.end();
    expect(await session.exited).toBe(0);
  });

  it("rein dev reloads on file change; a broken edit is reported and the previous plugins stay", async () => {
    const dir = project({
      "rein.config.ts": scriptedConfig(SCRIPT, 'plugins: ["./greeter.ts", "./no-greet.ts"],'),
      "greeter.ts": greeter("v1"),
      "no-greet.ts": DENY_GREET,
    });
    const session = chat(["dev"], dir);
    await session.waitFor("watching");
    session.send("first");
    await session.waitFor("done one");
    expect(session.stderr).toContain("no greetings today");

    // Broken: a syntax error. The deny policy must stay in force.
    writeFileSync(join(dir, "no-greet.ts"), "export default definePlugin({ name: ");
    await session.waitFor("✗ reload failed");
    expect(session.stderr).toContain("kept the previous plugins");
    session.send("second");
    await session.waitFor("done two");
    expect(session.stderr.split("no greetings today").length - 1).toBe(2);

    // Fixed: the policy now allows greetings.
    writeFileSync(
      join(dir, "no-greet.ts"),
      DENY_GREET.replace('call.name === "greet"', 'call.name === "nothing"'),
    );
    await session.waitFor("↻ reloaded");
    session.send("third");
    await session.waitFor("done three");
    expect(session.stderr).toContain("greeting: v1");
    session.end();
    expect(await session.exited).toBe(0);
  });
});
