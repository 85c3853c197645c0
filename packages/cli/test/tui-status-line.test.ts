/**
 * The terminal UI's status line reads the agent: the model, the context the last
 * request used against the model's window, the session's cost only when the model
 * has prices (as the terminal's last line), the permission mode (`none` without
 * @rein/plugin-permissions) and the sandbox (`no shell` without @rein/tools-shell).
 */
import { MemoryStorage, Session } from "@rein/harness";
import { definePlugin } from "@rein/sdk";
import { describe, expect, it } from "vitest";
import type { Agent } from "../src/agent/build-agent.js";
import { statusLine } from "../src/tui/status-line.js";
import { colorsFor } from "../src/ui/terminal.js";

const c = colorsFor({ isTTY: false } as NodeJS.WriteStream);
const plugin = (name: string) => definePlugin({ name, setup() {} });

function agent(cost: number, plugins: Agent["plugins"]): Agent {
  const session = Session.create(new MemoryStorage());
  session.appendMessage({ role: "user", content: "hi", timestamp: 1 });
  session.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: "hello" }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: {
      input: 1000,
      output: 500,
      cacheRead: 48_500,
      cacheWrite: 0,
      totalTokens: 50_000,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: cost },
    },
    stopReason: "stop",
    timestamp: 2,
  });
  const model = { provider: "anthropic", id: "claude-sonnet-4-5", contextWindow: 200_000 };
  return { session, plugins, harness: { model } } as unknown as Agent;
}

describe("the status line", () => {
  it("with prices: model, context used of the window, cost, mode and sandbox from the config", () => {
    const line = statusLine(
      agent(0.0123, [
        { entry: [plugin("permissions"), { mode: "acceptEdits" }], source: "" },
        { entry: [plugin("@rein/tools-shell"), { sandbox: { mode: "read-only" } }], source: "" },
      ]),
      c,
    );
    expect(line).toBe(
      "anthropic/claude-sonnet-4-5 · context 50.0k/200.0k (25%) · $0.0123 · mode acceptEdits · sandbox read-only",
    );
  });

  it("without prices no cost; defaults when the plugins set none; none and no shell when they are not loaded", () => {
    expect(
      statusLine(
        agent(0, [
          { entry: plugin("@rein/plugin-permissions"), source: "" },
          { entry: plugin("@rein/tools-shell"), source: "" },
        ]),
        c,
      ),
    ).toBe(
      "anthropic/claude-sonnet-4-5 · context 50.0k/200.0k (25%) · mode default · sandbox workspace-write",
    );
    expect(statusLine(agent(0, [{ entry: plugin("no-secrets"), source: "" }]), c)).toBe(
      "anthropic/claude-sonnet-4-5 · context 50.0k/200.0k (25%) · mode none · sandbox no shell",
    );
  });
});
