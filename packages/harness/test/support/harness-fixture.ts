/** Builds a harness on an in-memory session with a scripted model, and records its events. */
import { Type } from "typebox";
import type { HarnessEvent } from "../../src/events/event-types.js";
import { AgentHarness, type AgentHarnessOptions } from "../../src/harness/agent-harness.js";
import { MemoryStorage } from "../../src/session/memory-storage.js";
import { Session } from "../../src/session/session.js";
import type { AgentTool, AnyAgentTool } from "../../src/tools.js";
import { scriptedModel } from "./scripted-model.js";

export function fixture(
  options: Partial<AgentHarnessOptions> = {},
  model: { models?: { id: string; contextWindow?: number }[] } = {},
) {
  const scripted = scriptedModel(model);
  const session = options.session ?? Session.create(new MemoryStorage());
  const harness = new AgentHarness({
    model: scripted.model,
    models: scripted.collection,
    ...options,
    session,
  });
  const events: HarnessEvent[] = [];
  harness.subscribe((event) => {
    events.push(event);
  });
  return {
    harness,
    session,
    scripted,
    events,
    types: () => events.map((event) => event.type),
    messages: () => session.buildContext().messages,
    entryTypes: () =>
      session.branch().map((entry) => (entry.type === "message" ? `${entry.message.role}` : entry.type)),
  };
}

/** A tool that echoes its `text` argument, recording every call. */
export function echoTool(overrides: Partial<AnyAgentTool> = {}) {
  const calls: { args: { text: string }; toolCallId: string }[] = [];
  const tool: AgentTool<ReturnType<typeof echoSchema>> = {
    name: "echo",
    description: "Echo the text back",
    parameters: echoSchema(),
    risk: "read",
    execute: async (args, context) => {
      calls.push({ args, toolCallId: context.toolCallId });
      return { content: [{ type: "text", text: `echo: ${args.text}` }] };
    },
    ...overrides,
  };
  return { tool: tool as AnyAgentTool, calls };
}

const echoSchema = () => Type.Object({ text: Type.String() });

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A promise with its resolver, for holding a tool or tap until the test releases it. */
export function gate<T = void>() {
  let open!: (value: T) => void;
  const opened = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}
