/**
 * `prompt(input, { stopAfterTools: true })`: the run ends once a turn's tool calls
 * are answered, with no request for the model to read them; gates, `toolResult`
 * and the session are as in any run, queued messages still get their turns, and
 * the option is recorded in the run's `run_start` journal record.
 */
import type { Context } from "@earendil-works/pi-ai";
import { describe, expect, it } from "vitest";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

const userTexts = (context: Context | undefined) =>
  (context?.messages ?? [])
    .filter((m) => m.role === "user")
    .map((m) => (typeof m.content === "string" ? m.content : ""));
const roles = (f: ReturnType<typeof fixture>) => f.messages().map((m) => m.role);

describe("stopAfterTools", () => {
  it("ends the run after the tool calls are answered: one request, the result last, the option in run_start", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    const gated: string[] = [];
    f.harness.hooks.toolGate.tap("seen", (call) => {
      gated.push(call.name);
      return undefined;
    });
    f.harness.hooks.toolResult.tap("mark", (result) => ({
      ...result,
      content: [{ type: "text", text: `${(result.content[0] as { text: string }).text} (marked)` }],
    }));
    f.scripted.script([callTools(["echo", { text: "a" }], ["echo", { text: "b" }]), reply("never asked")]);
    const outcome = await f.harness.prompt("go", { stopAfterTools: true });
    expect(outcome.status).toBe("completed");
    expect(f.scripted.requests).toHaveLength(1);
    expect(echo.calls.map((call) => call.args.text)).toEqual(["a", "b"]);
    expect(gated).toEqual(["echo", "echo"]);
    expect(roles(f)).toEqual(["user", "assistant", "toolResult", "toolResult"]);
    const last = outcome.messages.at(-1);
    expect(last).toMatchObject({ role: "toolResult", content: [{ type: "text", text: "echo: b (marked)" }] });
    expect(f.types()).toContain("agent_end");
    const starts = f.session.journal().filter((record) => record.event === "run_start");
    expect(starts).toHaveLength(1);
    expect(starts[0]).toMatchObject({ event: "run_start", stopAfterTools: true });
    const ends = f.session.journal().filter((record) => record.event === "run_end");
    expect(ends[0]).toMatchObject({ status: "completed" });
  });

  it("without the option the model reads the results as before, and run_start carries no option", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("read it")]);
    await f.harness.prompt("go");
    expect(f.scripted.requests).toHaveLength(2);
    const start = f.session.journal().find((record) => record.event === "run_start");
    expect(start).toBeDefined();
    expect(start && "stopAfterTools" in start).toBe(false);
  });

  it("a reply with no tool calls ends the run as usual", async () => {
    const f = fixture();
    f.scripted.script([reply("just text")]);
    const outcome = await f.harness.prompt("go", { stopAfterTools: true });
    expect(outcome.status).toBe("completed");
    expect(roles(f)).toEqual(["user", "assistant"]);
  });

  it("a follow-up queued during the call still gets its turn, and that turn's tool calls stop the run again", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([
      () => {
        f.harness.followUp("one more");
        return callTools(["echo", { text: "a" }]);
      },
      callTools(["echo", { text: "b" }]),
      reply("never asked"),
    ]);
    await f.harness.prompt("go", { stopAfterTools: true });
    expect(f.scripted.requests).toHaveLength(2);
    expect(userTexts(f.scripted.requests[1]?.context)).toEqual(["go", "one more"]);
    expect(echo.calls.map((call) => call.args.text)).toEqual(["a", "b"]);
    expect(roles(f)).toEqual(["user", "assistant", "toolResult", "user", "assistant", "toolResult"]);
  });

  it("steering queued during the call is answered by the model in the same run", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([
      () => {
        f.harness.steer("change course");
        return callTools(["echo", { text: "a" }]);
      },
      reply("changed"),
    ]);
    await f.harness.prompt("go", { stopAfterTools: true });
    expect(f.scripted.requests).toHaveLength(2);
    expect(roles(f)).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
  });

  it("beforeStop is asked once the calls are answered and may still continue the run", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    const lastRoles: string[] = [];
    f.harness.hooks.beforeStop.tapPromise("checker", async ({ lastMessage, continuations }) => {
      lastRoles.push(lastMessage.content.map((block) => block.type).join(","));
      return continuations === 0 ? { decision: "continue", message: "check it" } : undefined;
    });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("checked"), reply("never asked")]);
    await f.harness.prompt("go", { stopAfterTools: true });
    expect(f.scripted.requests).toHaveLength(2);
    expect(lastRoles).toEqual(["toolCall", "text"]);
  });

  it("the next prompt without the option follows a run that ended on a tool result", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "a" }]), reply("after")]);
    await f.harness.prompt("first", { stopAfterTools: true });
    const outcome = await f.harness.prompt("second");
    expect(outcome.status).toBe("completed");
    expect(userTexts(f.scripted.requests[1]?.context)).toEqual(["first", "second"]);
    expect(roles(f)).toEqual(["user", "assistant", "toolResult", "user", "assistant"]);
  });

  it("refuses an unknown option or a non-boolean value, naming it, before the run starts", async () => {
    const f = fixture();
    await expect(
      f.harness.prompt("go", { stopAfterTool: true } as unknown as { stopAfterTools: boolean }),
    ).rejects.toMatchObject({ code: "invalid_argument", message: expect.stringContaining("stopAfterTool") });
    await expect(
      f.harness.prompt("go", { stopAfterTools: "yes" } as unknown as { stopAfterTools: boolean }),
    ).rejects.toMatchObject({ code: "invalid_argument", message: expect.stringContaining("boolean") });
    expect(f.session.journal()).toHaveLength(0);
    expect(f.harness.phase).toBe("idle");
  });
});
