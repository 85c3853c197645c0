import { describe, expect, it } from "vitest";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

describe("save points and pending writes", () => {
  it("a session write made while busy is pending until the save point, after the turn's messages", async () => {
    const echo = echoTool({
      execute: async () => {
        f.harness.appendEntry({ type: "custom", customType: "note", data: { during: "tool" } });
        expect(f.harness.pendingWrites).toHaveLength(1);
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(f.entryTypes().slice(-4)).toEqual(["assistant", "toolResult", "custom", "assistant"]);
    expect(f.harness.pendingWrites).toHaveLength(0);
  });

  it("pending writes flush even when a turn_end subscriber throws", async () => {
    const f = fixture();
    f.harness.on("turn_start", () => {
      f.harness.appendEntry({ type: "label", targetId: f.session.leafId as string, label: "start" });
    });
    f.harness.on("turn_end", () => {
      throw new Error("subscriber bug");
    });
    f.scripted.script([reply("done")]);
    await f.harness.prompt("go");
    expect(f.entryTypes().slice(-2)).toEqual(["assistant", "label"]);
    const errors = f.events.filter((e) => e.type === "plugin_error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      hook: "event:turn_end",
      message: expect.stringContaining("subscriber bug"),
    });
  });

  it("turn_end subscribers run before the flush, and save_point reports whether there were pending writes", async () => {
    const f = fixture();
    const order: string[] = [];
    f.harness.on("turn_end", () => {
      order.push(`turn_end(pending=${f.harness.pendingWrites.length})`);
    });
    f.harness.on("save_point", (e) => {
      order.push(`save_point(${e.hadPendingWrites},${e.flushed})`);
    });
    f.harness.on("message_end", () => {
      f.harness.appendEntry({ type: "custom", customType: "seen" });
    });
    f.scripted.script([reply("done")]);
    await f.harness.prompt("go");
    expect(order).toEqual(["turn_end(pending=2)", "save_point(true,2)"]);
  });

  it("a write made while idle is committed at once", () => {
    const f = fixture();
    f.harness.appendEntry({ type: "session_info", name: "named" });
    expect(f.session.entries().at(-1)).toMatchObject({ type: "session_info", name: "named" });
  });

  it("writes still pending when the run ends flush at settle, before settled", async () => {
    const f = fixture();
    let atSettled = -1;
    f.harness.on("agent_end", () => {
      f.harness.appendEntry({ type: "custom", customType: "late" });
    });
    f.harness.on("settled", () => {
      atSettled = f.session.entries().filter((e) => e.type === "custom").length;
    });
    f.scripted.script([reply("done")]);
    await f.harness.prompt("go");
    expect(atSettled).toBe(1);
  });

  it("a message is persisted before any listener sees its message_end", async () => {
    const f = fixture();
    const persisted: boolean[] = [];
    f.harness.on("message_end", (e) => {
      const last = f.session
        .entries()
        .filter((x) => x.type === "message")
        .at(-1);
      persisted.push(last?.type === "message" && last.message === e.message);
    });
    f.scripted.script([reply("done")]);
    await f.harness.prompt("go");
    expect(persisted).toEqual([true, true]);
  });

  it("config changed while idle is recorded at once; while busy it waits for the save point", async () => {
    const f = fixture();
    f.harness.setThinkingLevel("high");
    expect(f.session.entries().at(-1)).toMatchObject({
      type: "thinking_level_change",
      thinkingLevel: "high",
    });
    f.scripted.script([
      () => {
        f.harness.setThinkingLevel("low");
        expect(f.session.entries().at(-1)).not.toMatchObject({ thinkingLevel: "low" });
        return reply("done");
      },
    ]);
    await f.harness.prompt("go");
    expect(f.entryTypes().slice(-2)).toEqual(["assistant", "thinking_level_change"]);
    expect(f.session.buildContext().thinkingLevel).toBe("low");
  });
});
