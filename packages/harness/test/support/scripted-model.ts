/**
 * A scripted model on pi-ai's faux provider that records every request it
 * receives (context and options), so tests assert on what the model really saw.
 */
import {
  type AssistantMessage,
  type Context,
  createModels,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxToolCall,
  getCurrentSystemPrompt,
  getCurrentTools,
  getInitialSystemMessage,
  type JsonObject,
  type StreamOptions,
  type TranscriptContext,
} from "@earendil-works/pi-ai";
import type { StreamFunction } from "../../src/loop/loop-types.js";
import type { Message } from "../../src/session/entries.js";

export { fauxAssistantMessage, fauxText, fauxToolCall };

export type ScriptStep = AssistantMessage | FauxResponseFactory;

export interface RecordedRequest {
  context: Context;
  options: StreamOptions | undefined;
  modelId: string;
}

/** The request as the harness built it (pi-ai hands providers a transcript with a leading system message). */
export function requestContext(transcript: TranscriptContext): Context {
  const messages = transcript.messages;
  return {
    ...(getInitialSystemMessage(messages) ? { systemPrompt: getCurrentSystemPrompt(messages) } : {}),
    messages: messages.filter((message): message is Message => message.role !== "system"),
    tools: getCurrentTools(messages),
  };
}

export function scriptedModel(options: { models?: { id: string; contextWindow?: number }[] } = {}) {
  const faux = fauxProvider({
    ...(options.models ? { models: options.models } : {}),
    tokenSize: { min: 50, max: 50 },
  });
  const collection = createModels();
  collection.setProvider(faux.provider);
  const requests: RecordedRequest[] = [];
  const wrap =
    (step: ScriptStep): FauxResponseFactory =>
    (transcript, streamOptions, state, model) => {
      requests.push({ context: requestContext(transcript), options: streamOptions, modelId: model.id });
      return typeof step === "function" ? step(transcript, streamOptions, state, model) : step;
    };
  return {
    model: faux.getModel(),
    models: faux.models,
    /** The collection serving the faux models (the harness option `models`). */
    collection,
    /** `collection.streamSimple`, for `runAgentLoop`'s `streamFn`. */
    stream: ((model, context, streamOptions) =>
      collection.streamSimple(model, context, streamOptions)) as StreamFunction,
    requests,
    script(steps: ScriptStep[]) {
      faux.setResponses(steps.map(wrap));
    },
    append(steps: ScriptStep[]) {
      faux.appendResponses(steps.map(wrap));
    },
    pending: () => faux.getPendingResponseCount(),
    dispose: () => faux.setResponses([]),
  };
}

/** An assistant reply that calls tools. */
export const callTools = (...calls: [name: string, args: Record<string, unknown>, id?: string][]) =>
  fauxAssistantMessage(
    calls.map(([name, args, id]) => fauxToolCall(name, args as JsonObject, id ? { id } : {})),
    { stopReason: "toolUse" },
  );

export const reply = (text: string) => fauxAssistantMessage(text);
