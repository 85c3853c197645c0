/** Tap registration returns a disposer; removal is by identity and needs nothing private of Tapable. */
import { describe, expect, it } from "vitest";
import { removeTaps } from "../src/hooks/create-hooks.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

describe("tap disposers", () => {
  it("registration returns a disposer that removes exactly that tap, by identity", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    const ran: string[] = [];
    // Two taps under one name: a name cannot tell them apart, identity can.
    const first = f.harness.hooks.toolGate.tap("same", () => {
      ran.push("first");
      return undefined;
    });
    f.harness.hooks.toolGate.tapPromise("same", async () => {
      ran.push("second");
      return undefined;
    });
    f.harness.hooks.toolGate.tapAsync("other", (_call, _context, callback) => {
      ran.push("third");
      callback();
    });
    first();
    first(); // a second call does nothing
    expect(f.harness.hooks.toolGate.taps.map((tap) => tap.name)).toEqual(["same", "other"]);
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    await f.harness.prompt("go");
    expect(ran).toEqual(["second", "third"]);
  });

  it("removal during a dispatch leaves that dispatch's taps alone and applies from the next one", async () => {
    const f = fixture();
    const ran: string[] = [];
    let disposeLater: () => void = () => undefined;
    f.harness.hooks.beforeRun.tap("remover", (payload) => {
      ran.push("remover");
      disposeLater();
      return payload;
    });
    disposeLater = f.harness.hooks.beforeRun.tap("removed", (payload) => {
      ran.push("removed");
      return payload;
    });
    f.scripted.script([reply("one"), reply("two")]);
    await f.harness.prompt("a");
    await f.harness.prompt("b");
    expect(ran).toEqual(["remover", "removed", "remover"]);
  });

  it("hook.promise() sees taps added and removed after its first call (no stale compilation)", async () => {
    const f = fixture();
    const hook = f.harness.hooks.beforeStop;
    const request = { lastMessage: reply("x"), continuations: 0 };
    const context = f.harness.hookContext();
    expect(await hook.promise(request, context)).toBeUndefined();
    const dispose = hook.tap("stopper", () => ({ decision: "stop" }));
    expect(await hook.promise(request, context)).toMatchObject({ decision: "stop", by: "stopper" });
    dispose();
    expect(await hook.promise(request, context)).toBeUndefined();
  });

  it("a disposer removes the tap even when a register interceptor replaced the tap object", async () => {
    const f = fixture();
    const hook = f.harness.hooks.beforeStop;
    hook.intercept({ register: (tap) => ({ ...tap, stage: tap.stage ?? 0 }) });
    const dispose = hook.tap("stopper", () => ({ decision: "stop" }));
    expect(hook.taps).toHaveLength(1);
    dispose();
    expect(hook.taps).toHaveLength(0);
  });

  it("removeTaps removes every tap of a name without touching Tapable internals", () => {
    const f = fixture();
    f.harness.hooks.toolGate.tap("p", () => undefined);
    f.harness.hooks.toolResult.tap("p", () => undefined);
    f.harness.hooks.toolResult.tap("q", () => undefined);
    expect(removeTaps(f.harness.hooks, "p")).toBe(2);
    expect(f.harness.hooks.toolResult.taps.map((t) => t.name)).toEqual(["q"]);
  });
});
