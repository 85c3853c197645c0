/**
 * The permission prompt inside `rein run --chat`, on a real pseudo-terminal
 * (tmux), as a person uses it, in the plain line interface (`REIN_TUI=0`; the
 * terminal UI has its own pty test, tui.pty.e2e.test.ts): Enter (`\r` from the terminal) answers the
 * prompt, and the answer is never sent to the model as a chat message.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { JsonlStorage, Session, SessionStore } from "@rein/harness";
import { afterAll, describe, expect, it } from "vitest";
import {
  cacheRoot,
  cleanup,
  project,
  REIN_BIN,
  scriptedConfig,
  TOOLS_PLUGIN,
} from "./support/rein-process.js";

const PERMISSIONS = join(
  dirname(fileURLToPath(import.meta.url)),
  "../../plugins/plugin-permissions/dist/index.js",
);
const hasTmux = spawnSync("tmux", ["-V"]).status === 0;
const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });
const sessionName = `rein-pty-${process.pid}`;

afterAll(() => {
  spawnSync("tmux", ["kill-session", "-t", sessionName]);
  cleanup();
});

/** Waits until the pane shows `text` (the screen, including scrollback). */
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

describe.skipIf(!hasTmux)("rein run --chat on a real terminal", { timeout: 90_000 }, () => {
  it("the permission prompt takes Enter, and its answer never reaches the model", async () => {
    const dir = project({
      "tools.ts": TOOLS_PLUGIN,
      "rein.config.ts": scriptedConfig(
        [{ toolCalls: [{ name: "push", args: { remote: "origin" } }] }, "pushed it", "never sent"],
        `plugins: ["./tools.ts", ${JSON.stringify(PERMISSIONS)}],`,
      ),
    });
    const command = [
      `cd ${JSON.stringify(dir)}`,
      `REIN_TUI=0 NO_COLOR=1 REIN_CACHE_DIR=${JSON.stringify(cacheRoot)} ${JSON.stringify(process.execPath)} ${JSON.stringify(REIN_BIN)} run --chat`,
      "echo $? > exit-code",
      "sleep 60",
    ].join("; ");
    tmux("new-session", "-d", "-s", sessionName, "-x", "160", "-y", "50", command);

    await waitFor("› ");
    // `Enter` in tmux is what the key sends: `\r`.
    tmux("send-keys", "-t", sessionName, "push it", "Enter");
    await waitFor("[n] deny");
    tmux("send-keys", "-t", sessionName, "y", "Enter");
    const screen = await waitFor("pushed it");
    expect(screen).toContain("pushed it");
    // Back at the chat prompt; leave.
    await new Promise((resolve) => setTimeout(resolve, 300));
    tmux("send-keys", "-t", sessionName, "/exit", "Enter");
    const deadline = Date.now() + 30_000;
    while (!existsSync(join(dir, "exit-code")) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(readFileSync(join(dir, "exit-code"), "utf8").trim()).toBe("0");
    expect(tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", sessionName)).not.toContain("never sent");

    const [summary] = new SessionStore(join(dir, ".rein/sessions")).list();
    const session = Session.open(JsonlStorage.open(summary?.path as string, { readOnly: true }));
    const messages = session.buildContext().messages;
    session.close();
    const users = messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    expect(users).toEqual([JSON.stringify("push it")]);
    const result = messages.find((m) => m.role === "toolResult");
    expect(result).toMatchObject({
      isError: false,
      decision: { decision: "allow", by: "permissions", askedBy: "harness:default" },
    });
  });
});
