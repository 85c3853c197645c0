import { describe, expect, it } from "vitest";
import { EVENT_TYPES } from "../src/events/event-types.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

describe("events: observation only, delivered in order", () => {
  it("subscribe sees every event and returns an unsubscribe function", async () => {
    const f = fixture();
    const seen: string[] = [];
    const off = f.harness.subscribe((e) => {
      seen.push(e.type);
    });
    f.scripted.script([reply("one"), reply("two")]);
    await f.harness.prompt("a");
    const firstRun = seen.length;
    off();
    await f.harness.prompt("b");
    expect(firstRun).toBeGreaterThan(0);
    expect(seen).toHaveLength(firstRun);
  });

  it("on(type) sees only that type, typed, and can unsubscribe", async () => {
    const f = fixture();
    const texts: string[] = [];
    const off = f.harness.on("message_end", (e) => {
      texts.push(e.message.role);
    });
    f.scripted.script([reply("one"), reply("two")]);
    await f.harness.prompt("a");
    off();
    await f.harness.prompt("b");
    expect(texts).toEqual(["user", "assistant"]);
  });

  it("listeners are awaited in order: a slow listener delays the next event, never reorders it", async () => {
    const f = fixture();
    const log: string[] = [];
    f.harness.subscribe(async (e) => {
      if (e.type === "message_start") await new Promise((r) => setTimeout(r, 5));
      log.push(`a:${e.type}`);
    });
    f.harness.subscribe((e) => {
      log.push(`b:${e.type}`);
    });
    f.scripted.script([reply("x")]);
    await f.harness.prompt("go");
    const forType = (t: string) => log.filter((l) => l.endsWith(`:${t}`));
    expect(forType("message_start")).toEqual([
      "a:message_start",
      "b:message_start",
      "a:message_start",
      "b:message_start",
    ]);
    const indexOf = (entry: string) => log.indexOf(entry);
    expect(indexOf("b:agent_start")).toBeLessThan(indexOf("a:turn_start"));
  });

  it("a run emits start/end pairs in a well-formed order", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    const types = f
      .types()
      .filter((t) => t !== "message_update" && t !== "config_change" && t !== "queue_update");
    expect(types).toEqual([
      "agent_start",
      "message_start",
      "message_end",
      "turn_start",
      "message_start",
      "message_end",
      "tool_decision",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "save_point",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "save_point",
      "agent_end",
      "settled",
    ]);
  });

  it("a listener that throws is reported as plugin_error naming its owner, and the run goes on", async () => {
    const f = fixture();
    f.harness.on(
      "message_start",
      () => {
        throw new Error("ui crashed");
      },
      { owner: "fancy-ui" },
    );
    f.scripted.script([reply("x")]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("completed");
    const errors = f.events.filter((e) => e.type === "plugin_error");
    expect(errors[0]).toMatchObject({ plugin: "fancy-ui", hook: "event:message_start" });
  });

  it("a listener calling steer re-entrantly is delivered after the current event and drives one more turn", async () => {
    const f = fixture();
    let steered = false;
    f.harness.on("turn_end", () => {
      if (!steered) {
        steered = true;
        f.harness.steer("one more");
      }
    });
    f.scripted.script([reply("first"), reply("second")]);
    await f.harness.prompt("go");
    expect(f.scripted.requests).toHaveLength(2);
    const t = f.types();
    expect(t.indexOf("queue_update")).toBeGreaterThan(t.indexOf("turn_end"));
  });

  it("every event is a plain serialisable object with a known type", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    for (const event of f.events) {
      expect(EVENT_TYPES).toContain(event.type);
      expect(JSON.parse(JSON.stringify(event))).toMatchObject({ type: event.type });
    }
  });
});
