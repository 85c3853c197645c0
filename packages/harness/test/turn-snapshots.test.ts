import type { Model } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { AgentHarness } from "../src/harness/agent-harness.js";
import { MemoryStorage } from "../src/session/memory-storage.js";
import { Session } from "../src/session/session.js";
import type { AnyAgentTool } from "../src/tools.js";
import { echoTool, fixture } from "./support/harness-fixture.js";
import { callTools, reply, scriptedModel } from "./support/scripted-model.js";

describe("turn snapshots: config is fixed within a turn and may change between turns", () => {
  it("a model switched while the provider streams affects only the next turn", async () => {
    const scripted = scriptedModel({ models: [{ id: "model-a" }, { id: "model-b" }] });
    const [modelA, modelB] = scripted.models as [Model<string>, Model<string>];
    const echo = echoTool();
    const session = Session.create(new MemoryStorage());
    const harness = new AgentHarness({
      session,
      model: modelA,
      models: scripted.collection,
      tools: [echo.tool],
    });
    scripted.script([
      () => {
        harness.setModel(modelB); // mid-request: the request in flight is not altered
        return callTools(["echo", { text: "x" }]);
      },
      reply("done"),
    ]);
    await harness.prompt("go");
    expect(scripted.requests.map((r) => r.modelId)).toEqual(["model-a", "model-b"]);
    expect(harness.model.id).toBe("model-b");
  });

  it("history reads user, assistant(toolCall), toolResult, model_change when the model changes during streaming", async () => {
    const scripted = scriptedModel({ models: [{ id: "model-a" }, { id: "model-b" }] });
    const [modelA, modelB] = scripted.models as [Model<string>, Model<string>];
    const echo = echoTool();
    const session = Session.create(new MemoryStorage());
    const harness = new AgentHarness({
      session,
      model: modelA,
      models: scripted.collection,
      tools: [echo.tool],
    });
    scripted.script([
      () => {
        harness.setModel(modelB);
        return callTools(["echo", { text: "x" }]);
      },
      reply("done"),
    ]);
    await harness.prompt("go");
    const order = session
      .branch()
      .filter((e) => e.type !== "thinking_level_change" && e.type !== "active_tools_change")
      .map((e) => (e.type === "message" ? e.message.role : `${e.type}:${"modelId" in e ? e.modelId : ""}`));
    expect(order).toEqual([
      "model_change:model-a",
      "user",
      "assistant",
      "toolResult",
      "model_change:model-b",
      "assistant",
    ]);
    expect(session.buildContext().model).toEqual({ provider: modelB.provider, modelId: "model-b" });
  });

  it("a tool replaced mid-turn still executes the call with the snapshot's definition; the next turn sees the new one", async () => {
    const executed: string[] = [];
    const v1: AnyAgentTool = {
      name: "work",
      description: "version one",
      parameters: Type.Object({}),
      execute: () => {
        executed.push("v1");
        return { content: [{ type: "text", text: "v1 ran" }] };
      },
    };
    const v2: AnyAgentTool = {
      ...v1,
      description: "version two",
      execute: () => {
        executed.push("v2");
        return { content: [{ type: "text", text: "v2 ran" }] };
      },
    };
    const f = fixture({ tools: [v1] });
    f.scripted.script([
      () => {
        f.harness.setTools([v2]);
        return callTools(["work", {}]);
      },
      reply("done"),
    ]);
    await f.harness.prompt("go");
    expect(executed).toEqual(["v1"]);
    expect(f.scripted.requests[0]?.context.tools?.[0]?.description).toBe("version one");
    expect(f.scripted.requests[1]?.context.tools?.[0]?.description).toBe("version two");
  });

  it("a tool disabled mid-turn still runs for a call the model made while it was visible", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    f.scripted.script([
      () => {
        f.harness.setActiveTools([]);
        return callTools(["echo", { text: "still runs" }]);
      },
      reply("done"),
    ]);
    await f.harness.prompt("go");
    expect(echo.calls.map((c) => c.args.text)).toEqual(["still runs"]);
    expect(f.scripted.requests[1]?.context.tools).toEqual([]);
  });

  it("arguments are validated against the snapshot's schema; invalid ones become an error result the model reads", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool] });
    // pi-ai coerces model quirks such as "20" -> 20; an object where a string is expected cannot be coerced
    f.scripted.script([callTools(["echo", { text: { nested: 1 } }]), reply("ok")]);
    await f.harness.prompt("go");
    expect(echo.calls).toHaveLength(0);
    const result = f.messages().find((m) => m.role === "toolResult");
    expect(result).toMatchObject({
      role: "toolResult",
      isError: true,
      decision: { decision: "deny", by: "harness" },
    });
    const secondRequest = f.scripted.requests[1]?.context.messages ?? [];
    expect(secondRequest.at(-1)).toMatchObject({ role: "toolResult", isError: true });
  });

  it("the snapshot exposes the turn's model, tools and messages while the turn runs", async () => {
    const echo = echoTool();
    const f = fixture({ tools: [echo.tool], systemPrompt: () => "resolved per turn" });
    let seen: unknown;
    f.scripted.script([
      () => {
        seen = {
          model: f.harness.snapshot?.model.id,
          tools: f.harness.snapshot?.activeToolNames,
          prompt: f.harness.snapshot?.systemPrompt,
          messages: f.harness.snapshot?.messages.length,
        };
        return reply("hi");
      },
    ]);
    await f.harness.prompt("go");
    expect(seen).toEqual({
      model: f.scripted.model.id,
      tools: ["echo"],
      prompt: "resolved per turn",
      messages: 1,
    });
    expect(f.harness.snapshot).toBeUndefined();
  });
});
