import { describe, expect, it } from "vitest";
import { definePlugin, type Rein } from "../src/index.js";
import { createTestHarness } from "../src/testing/index.js";

describe("the rein object", () => {
  it("reads live config through read-only getters", async () => {
    let rein: Rein | undefined;
    const plugin = definePlugin({
      name: "reader",
      setup: (r) => {
        rein = r;
      },
    });
    const t = await createTestHarness({ plugins: [plugin], config: { cwd: "/a", systemPrompt: "x" } });
    expect(rein?.config.cwd).toBe("/a");
    expect(rein?.config.sessionId).toBe(t.session.id);
    t.harness.setThinkingLevel("high");
    expect(rein?.config.thinkingLevel).toBe("high");
    expect(() => {
      (rein?.config as { cwd: string }).cwd = "/b";
    }).toThrow();
    expect(rein?.plugin).toEqual({ name: "reader", version: undefined });
    await t.dispose();
  });

  it("queues session writes made during a run until the save point", async () => {
    const plugin = definePlugin({
      name: "journal",
      setup(rein) {
        rein.on("turn_start", () => {
          rein.session.append({ type: "custom", customType: "journal", data: { at: "turn_start" } });
        });
      },
    });
    const t = await createTestHarness({ plugins: [plugin], script: ["hi"] });
    let pendingDuringTurn = -1;
    t.harness.on("message_end", () => {
      pendingDuringTurn = t.harness.pendingWrites.length;
    });
    await t.prompt("go");
    expect(pendingDuringTurn).toBe(1);
    const types = t.session.branch().map((entry) => entry.type);
    // Committed after the turn's messages, never between them.
    expect(types.lastIndexOf("custom")).toBeGreaterThan(types.lastIndexOf("message"));
    await t.dispose();
  });

  it("routes withOptions taps through the plugin's name too", async () => {
    const plugin = definePlugin({
      name: "staged",
      setup(rein) {
        rein.hooks.toolGate.withOptions({ stage: 100 }).tap("label", () => undefined);
      },
    });
    const t = await createTestHarness({ plugins: [plugin] });
    expect(t.harness.hooks.toolGate.taps).toMatchObject([{ name: "staged", stage: 100 }]);
    expect(t.host.plugins[0]?.taps).toEqual([{ hook: "toolGate", type: "sync", stage: 100, label: "label" }]);
    await t.dispose();
  });
});
