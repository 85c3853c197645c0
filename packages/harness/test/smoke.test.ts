import { describe, expect, it } from "vitest";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply } from "./support/scripted-model.js";

describe("smoke", () => {
  it("runs a prompt with one tool call and persists user, assistant, toolResult, assistant", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([callTools(["echo", { text: "hi" }]), reply("done")]);
    const outcome = await f.harness.prompt("say hi");
    expect(outcome.status).toBe("completed");
    expect(f.messages().map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(echo.calls).toHaveLength(1);
    expect(f.types()).toContain("settled");
    console.log(f.types().join(" "));
  });
});
