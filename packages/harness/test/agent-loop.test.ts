import type { Model } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import type { HarnessEvent } from "../src/events/event-types.js";
import { runAgentLoop } from "../src/loop/agent-loop.js";
import type { LoopTurn } from "../src/loop/loop-types.js";
import type { AnyAgentTool } from "../src/tools.js";
import { sleep } from "./support/harness-fixture.js";
import { callTools, fauxAssistantMessage, reply, scriptedModel } from "./support/scripted-model.js";

function timedTool(name: string, ms: number, log: string[], mode?: "sequential"): AnyAgentTool {
  return {
    name,
    description: name,
    parameters: Type.Object({ n: Type.Number() }),
    executionMode: mode,
    execute: async (args: { n: number }) => {
      log.push(`start ${name}${args.n}`);
      await sleep(ms);
      log.push(`end ${name}${args.n}`);
      return { content: [{ type: "text", text: `${name}${args.n}` }] };
    },
  };
}

function context(model: Model<string>, tools: AnyAgentTool[]): LoopTurn {
  return { model, systemPrompt: "", messages: [], tools, thinkingLevel: "off", requestOptions: {} };
}

describe("runAgentLoop on its own", () => {
  it("runs parallel tools together and records results in call order", async () => {
    const scripted = scriptedModel();
    const log: string[] = [];
    const tools = [timedTool("slow", 30, log), timedTool("fast", 1, log)];
    scripted.script([callTools(["slow", { n: 1 }], ["fast", { n: 2 }]), reply("done")]);
    const result = await runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], {
      streamFn: scripted.stream,
      context: context(scripted.model, tools),
    });
    expect(result.status).toBe("completed");
    expect(log).toEqual(["start slow1", "start fast2", "end fast2", "end slow1"]);
    const results = result.messages.filter((m) => m.role === "toolResult");
    expect(results.map((m) => (m.role === "toolResult" ? m.toolName : ""))).toEqual(["slow", "fast"]);
  });

  it("a sequential tool runs alone: earlier calls finish first and later ones wait", async () => {
    const scripted = scriptedModel();
    const log: string[] = [];
    const tools = [timedTool("par", 20, log), timedTool("seq", 5, log, "sequential")];
    scripted.script([callTools(["par", { n: 1 }], ["seq", { n: 2 }], ["par", { n: 3 }]), reply("done")]);
    await runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], {
      streamFn: scripted.stream,
      context: context(scripted.model, tools),
    });
    expect(log).toEqual(["start par1", "end par1", "start seq2", "end seq2", "start par3", "end par3"]);
  });

  it("an unknown tool and invalid arguments become error results the model reads, in call order", async () => {
    const scripted = scriptedModel();
    const log: string[] = [];
    scripted.script([
      callTools(["nope", {}], ["par", { n: "not a number at all" }], ["par", { n: "7" }]),
      reply("done"),
    ]);
    const result = await runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], {
      streamFn: scripted.stream,
      context: context(scripted.model, [timedTool("par", 1, log)]),
    });
    const results = result.messages.filter((m) => m.role === "toolResult");
    expect(results.map((m) => (m.role === "toolResult" ? m.isError : null))).toEqual([true, true, false]);
    expect(JSON.stringify(results[0])).toContain("not available");
    expect(log).toEqual(["start par7", "end par7"]); // "7" was coerced to 7 by pi-ai's validation
    expect(scripted.requests[1]?.context.messages.filter((m) => m.role === "toolResult")).toHaveLength(3);
  });

  it("a provider error becomes a closed assistant message with stopReason error", async () => {
    const scripted = scriptedModel();
    scripted.script([fauxAssistantMessage([], { stopReason: "error", errorMessage: "overloaded" })]);
    const events: HarnessEvent[] = [];
    const result = await runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], {
      streamFn: scripted.stream,
      context: context(scripted.model, []),
      emit: (e) => {
        events.push(e);
      },
    });
    expect(result.status).toBe("error");
    expect(result.messages.at(-1)).toMatchObject({
      role: "assistant",
      stopReason: "error",
      errorMessage: "overloaded",
    });
    expect(events.map((e) => e.type).slice(-2)).toEqual(["turn_end", "agent_end"]);
  });

  it("a tool that throws becomes an error result, and the run continues", async () => {
    const scripted = scriptedModel();
    const broken: AnyAgentTool = {
      name: "broken",
      description: "",
      parameters: Type.Object({}),
      execute: () => {
        throw new Error("disk on fire");
      },
    };
    scripted.script([callTools(["broken", {}]), reply("recovered")]);
    const result = await runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], {
      streamFn: scripted.stream,
      context: context(scripted.model, [broken]),
    });
    expect(result.status).toBe("completed");
    expect(result.messages[2]).toMatchObject({
      role: "toolResult",
      isError: true,
      content: [{ text: "disk on fire" }],
    });
  });

  it("an abort during a tool ends the run as aborted after recording every result", async () => {
    const scripted = scriptedModel();
    const controller = new AbortController();
    const waiter: AnyAgentTool = {
      name: "wait",
      description: "",
      parameters: Type.Object({}),
      execute: (_a, ctx) =>
        new Promise((resolve) => {
          const stop = () => resolve({ content: [{ type: "text", text: "aborted" }], isError: true });
          if (ctx.signal.aborted) stop();
          ctx.signal.addEventListener("abort", stop);
          controller.abort();
        }),
    };
    scripted.script([callTools(["wait", {}], ["wait", {}]), reply("never")]);
    const result = await runAgentLoop([{ role: "user", content: "go", timestamp: 0 }], {
      streamFn: scripted.stream,
      context: context(scripted.model, [waiter]),
      signal: controller.signal,
    });
    expect(result.status).toBe("aborted");
    expect(result.messages.filter((m) => m.role === "toolResult")).toHaveLength(2);
    expect(scripted.requests).toHaveLength(1);
  });
});
