/**
 * `rein check` on a real pseudo-terminal (tmux): an ask goes to `permissionAsk`
 * as in a run (plugin-permissions prompts), and the answer - and the tap that
 * gave it - is in the trail and decides the exit code.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  cacheRoot,
  cleanup,
  project,
  REIN_BIN,
  scriptedConfig,
  TOOLS_PLUGIN,
} from "./support/rein-process.js";

const plugins = join(dirname(fileURLToPath(import.meta.url)), "../../plugins");
const PERMISSIONS = join(plugins, "plugin-permissions/dist/index.js");
const POLICY = join(plugins, "plugin-policy/dist/index.js");
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
const sessionName = `rein-check-pty-${process.pid}`;

afterAll(() => {
  spawnSync("tmux", ["kill-session", "-t", sessionName]);
  cleanup();
});

async function waitFor(text: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let screen = "";
  while (Date.now() < deadline) {
    screen = tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", sessionName);
    if (screen.includes(text)) return screen;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${JSON.stringify(text)}; the screen shows:\n${screen}`);
}

describe.skipIf(!hasTmux)("rein check on a real terminal", { timeout: 90_000 }, () => {
  it("puts an ask to permissionAsk; the answer is in the trail and sets the exit code", async () => {
    const policy = `[${JSON.stringify(POLICY)}, { rules: [{ id: "confirm-push", rule: "push", decision: "ask", reason: "pushing publishes" }] }]`;
    const dir = project({
      "tools.ts": TOOLS_PLUGIN,
      "rein.config.ts": scriptedConfig(
        [],
        `plugins: ["./tools.ts", ${policy}, ${JSON.stringify(PERMISSIONS)}],`,
      ),
    });
    const command = [
      `cd ${JSON.stringify(dir)}`,
      `NO_COLOR=1 REIN_CACHE_DIR=${JSON.stringify(cacheRoot)} ${JSON.stringify(process.execPath)} ${JSON.stringify(REIN_BIN)} check 'push(origin)'`,
      "echo $? > exit-code",
      "sleep 60",
    ].join("; ");
    tmux("new-session", "-d", "-s", sessionName, "-x", "200", "-y", "50", command);
    await waitFor("[n] deny");
    tmux("send-keys", "-t", sessionName, "n", "Enter");
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(dir, "exit-code")) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(readFileSync(join(dir, "exit-code"), "utf8").trim()).toBe("1");
    const screen = tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", sessionName);
    expect(screen).toMatch(/policy:confirm-push\s+ask\s+pushing publishes/);
    expect(screen).toMatch(/permissions\s+deny\s+denied at the prompt/);
    expect(screen).toContain("DENY by permissions:");
    expect(screen).toContain("asked by policy:confirm-push");
  });
});
