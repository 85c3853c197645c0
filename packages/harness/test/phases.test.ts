import { describe, expect, it } from "vitest";
import { HarnessErrorCode } from "../src/errors.js";
import { echoTool, fixture, gate } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

describe("phases: structural operations start only from idle", () => {
  it("every structural operation rejects with busy while a run is in progress", async () => {
    const release = gate();
    const started = gate();
    const echo = echoTool({
      execute: async () => {
        started.open();
        await release.opened;
        return { content: [{ type: "text", text: "ok" }] };
      },
    });
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "x" }]), reply("done")]);
    const run = f.harness.prompt("go");
    expect(f.harness.phase).toBe("turn"); // taken synchronously, before the first await
    await started.opened;
    await expect(f.harness.prompt("again")).rejects.toMatchObject({ code: HarnessErrorCode.busy });
    await expect(f.harness.navigateTree(null)).rejects.toMatchObject({ code: HarnessErrorCode.busy });
    release.open();
    await run;
    expect(f.harness.phase).toBe("idle");
  });

  it("a second prompt called in the same tick is rejected, never interleaved", async () => {
    const f = fixture();
    f.scripted.script([reply("one"), reply("two")]);
    const first = f.harness.prompt("a");
    const second = f.harness.prompt("b");
    await expect(second).rejects.toMatchObject({ code: "busy" });
    await first;
    expect(f.messages().map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("live setters, queue operations and session writes are accepted while busy", async () => {
    const f = fixture();
    const results: string[] = [];
    f.scripted.script([
      () => {
        f.harness.setThinkingLevel("medium");
        f.harness.setSystemPrompt("later");
        f.harness.setRequestOptions({ maxTokens: 10 });
        f.harness.nextTurn("n");
        f.harness.appendEntry({ type: "custom", customType: "x" });
        results.push(f.harness.thinkingLevel);
        return reply("done");
      },
    ]);
    await f.harness.prompt("go");
    expect(results).toEqual(["medium"]);
    expect(f.types().filter((t) => t === "config_change")).toHaveLength(3);
  });

  it("waitForIdle resolves only after settled", async () => {
    const f = fixture();
    f.scripted.script([reply("done")]);
    const order: string[] = [];
    f.harness.on("settled", async () => {
      await new Promise((r) => setTimeout(r, 10));
      order.push("settled listener done");
    });
    const run = f.harness.prompt("go");
    await f.harness.waitForIdle();
    order.push("waitForIdle resolved");
    await run;
    expect(order).toEqual(["settled listener done", "waitForIdle resolved"]);
  });

  it("waitForIdle resolves at once when nothing runs", async () => {
    const f = fixture();
    await expect(f.harness.waitForIdle()).resolves.toBeUndefined();
  });

  it("settled is the last event of a run and agent_end comes before it", async () => {
    const f = fixture();
    f.scripted.script([reply("done")]);
    await f.harness.prompt("go");
    const types = f.types();
    expect(types.at(-1)).toBe("settled");
    expect(types.indexOf("agent_end")).toBeLessThan(types.indexOf("settled"));
  });

  it("the constructor rejects duplicate and unknown tool names", () => {
    const echo = echoTool();
    expect(() => fixture({ tools: [echo.tool, echo.tool] })).toThrow(
      expect.objectContaining({ code: "invalid_argument" }),
    );
    expect(() => fixture({ tools: [echo.tool], activeTools: ["echo", "missing"] })).toThrow(
      expect.objectContaining({ code: "invalid_argument", message: expect.stringContaining('"missing"') }),
    );
  });

  it("navigateTree moves the leaf when idle and beforeBranch can cancel it", async () => {
    const f = fixture();
    f.scripted.script([reply("one"), reply("two")]);
    await f.harness.prompt("first");
    const firstAnswer = f.session.leafId as string;
    await f.harness.prompt("second");
    const result = await f.harness.navigateTree(firstAnswer, { summary: "tried a second question" });
    expect(result.status).toBe("done");
    expect(f.session.buildContext().messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    f.harness.hooks.beforeBranch.tapPromise("keeper", async () => ({ cancel: { reason: "stay here" } }));
    const cancelled = await f.harness.navigateTree(null);
    expect(cancelled).toEqual({ status: "cancelled", reason: "stay here (by keeper)" });
    expect(f.session.leafId).not.toBeNull();
  });
});
