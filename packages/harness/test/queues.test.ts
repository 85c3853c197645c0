import type { Context } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { echoTool, fixture, gate } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const userTexts = (context: Context | undefined) =>
  (context?.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : ""));

describe("queues: steer, followUp, nextTurn", () => {
  it("steering is injected after the current turn fully ends, one at a time by default", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([
      () => {
        f.harness.steer("steer 1");
        f.harness.steer("steer 2");
        return callTools(["echo", { text: "a" }]);
      },
      reply("turn 2"),
      reply("turn 3"),
    ]);
    await f.harness.prompt("go");
    expect(f.scripted.requests).toHaveLength(3);
    expect(userTexts(f.scripted.requests[1]?.context)).toEqual(["go", "steer 1"]);
    expect(userTexts(f.scripted.requests[2]?.context)).toEqual(["go", "steer 1", "steer 2"]);
    // the tool result of turn 1 precedes the steering message
    const roles = f.messages().map((m) => m.role);
    expect(roles).toEqual(["user", "assistant", "toolResult", "user", "assistant", "user", "assistant"]);
  });

  it("steering in mode all injects every queued message at once", async () => {
    const f = fixture({ queueModes: { steer: "all" } });
    f.scripted.script([
      () => {
        f.harness.steer("s1");
        f.harness.steer("s2");
        return reply("first");
      },
      reply("second"),
    ]);
    await f.harness.prompt("go");
    expect(f.scripted.requests).toHaveLength(2);
    expect(userTexts(f.scripted.requests[1]?.context)).toEqual(["go", "s1", "s2"]);
  });

  it("a follow-up waits until the agent would stop, then continues the run", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([
      () => {
        f.harness.followUp("and then this");
        return callTools(["echo", { text: "a" }]);
      },
      reply("task done"),
      reply("follow-up done"),
    ]);
    await f.harness.prompt("go");
    expect(userTexts(f.scripted.requests[1]?.context)).toEqual(["go"]);
    expect(userTexts(f.scripted.requests[2]?.context)).toEqual(["go", "and then this"]);
  });

  it("follow-ups in mode all are consumed together; one-at-a-time gives one extra turn each", async () => {
    const all = fixture({ queueModes: { followUp: "all" } });
    all.scripted.script([
      () => {
        all.harness.followUp("f1");
        all.harness.followUp("f2");
        return reply("a");
      },
      reply("b"),
    ]);
    await all.harness.prompt("go");
    expect(all.scripted.requests).toHaveLength(2);

    const one = fixture();
    one.scripted.script([
      () => {
        one.harness.followUp("f1");
        one.harness.followUp("f2");
        return reply("a");
      },
      reply("b"),
      reply("c"),
    ]);
    await one.harness.prompt("go");
    expect(one.scripted.requests).toHaveLength(3);
    expect(userTexts(one.scripted.requests[2]?.context)).toEqual(["go", "f1", "f2"]);
  });

  it("next-turn messages wait for the next prompt and come before its user message", async () => {
    const f = fixture();
    f.scripted.script([
      () => {
        f.harness.nextTurn("context for later");
        return reply("first run");
      },
      reply("second run"),
    ]);
    await f.harness.prompt("one");
    expect(userTexts(f.scripted.requests[0]?.context)).toEqual(["one"]);
    expect(f.harness.queued("nextTurn")).toBe(1);
    await f.harness.prompt("two");
    expect(userTexts(f.scripted.requests[1]?.context)).toEqual(["one", "context for later", "two"]);
    expect(f.harness.queued("nextTurn")).toBe(0);
  });

  it("abort clears steer and follow-up but keeps next-turn, and the session stays closed", async () => {
    const started = gate();
    const echo = echoTool({
      execute: (_args, context) =>
        new Promise((resolve) => {
          started.open();
          context.signal.addEventListener("abort", () =>
            resolve({ content: [{ type: "text", text: "stopped" }], isError: true }),
          );
        }),
    });
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "slow" }]), reply("never")]);
    const run = f.harness.prompt("go");
    await started.opened;
    f.harness.steer("s");
    f.harness.followUp("f");
    f.harness.nextTurn("n");
    f.harness.abort("user pressed stop");
    const outcome = await run;
    expect(outcome.status).toBe("aborted");
    expect([f.harness.queued("steer"), f.harness.queued("followUp"), f.harness.queued("nextTurn")]).toEqual([
      0, 0, 1,
    ]);
    expect(f.messages().map((m) => m.role)).toEqual(["user", "assistant", "toolResult"]);
    expect(f.types()).toContain("abort");
    expect(f.scripted.requests).toHaveLength(1);
  });

  it("an abort while the provider streams ends the run with a closed aborted message", async () => {
    const f = fixture();
    f.scripted.script([
      () => {
        f.harness.abort();
        return reply("a long answer that will not finish streaming");
      },
    ]);
    const outcome = await f.harness.prompt("go");
    expect(outcome.status).toBe("aborted");
    const last = f.messages().at(-1);
    expect(last).toMatchObject({ role: "assistant", stopReason: "aborted" });
    expect(f.types().slice(-4)).toEqual(["turn_end", "save_point", "agent_end", "settled"]);
  });

  it("every queue change emits queue_update with the queues' contents", async () => {
    const f = fixture();
    f.harness.steer("a");
    f.harness.nextTurn("b");
    await f.harness.waitForIdle();
    await new Promise((r) => setTimeout(r, 0));
    const updates = f.events.filter((e) => e.type === "queue_update");
    expect(
      updates.map((u) => (u.type === "queue_update" ? [u.queue, u.steer.length, u.nextTurn.length] : [])),
    ).toEqual([
      ["steer", 1, 0],
      ["nextTurn", 1, 1],
    ]);
  });
});
