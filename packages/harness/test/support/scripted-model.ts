/**
 * A scripted model on pi-ai's faux provider that records every request it
 * receives (context and options), so tests assert on what the model really saw.
 */
import {
  type AssistantMessage,
  type Context,
  type FauxResponseFactory,
  fauxAssistantMessage,
  fauxText,
  fauxToolCall,
  registerFauxProvider,
  type StreamOptions,
} from "@mariozechner/pi-ai";

export { fauxAssistantMessage, fauxText, fauxToolCall };

export type ScriptStep = AssistantMessage | FauxResponseFactory;

export interface RecordedRequest {
  context: Context;
  options: StreamOptions | undefined;
  modelId: string;
}

export function scriptedModel(options: { models?: { id: string; contextWindow?: number }[] } = {}) {
  const faux = registerFauxProvider({ models: options.models, tokenSize: { min: 50, max: 50 } });
  const requests: RecordedRequest[] = [];
  const wrap =
    (step: ScriptStep): FauxResponseFactory =>
    (context, streamOptions, state, model) => {
      requests.push({
        context: { ...context, messages: [...context.messages] },
        options: streamOptions,
        modelId: model.id,
      });
      return typeof step === "function" ? step(context, streamOptions, state, model) : step;
    };
  return {
    model: faux.getModel(),
    models: faux.models,
    requests,
    script(steps: ScriptStep[]) {
      faux.setResponses(steps.map(wrap));
    },
    append(steps: ScriptStep[]) {
      faux.appendResponses(steps.map(wrap));
    },
    pending: () => faux.getPendingResponseCount(),
    dispose: () => faux.unregister(),
  };
}

/** An assistant reply that calls tools. */
export const callTools = (...calls: [name: string, args: Record<string, unknown>, id?: string][]) =>
  fauxAssistantMessage(
    calls.map(([name, args, id]) => fauxToolCall(name, args, id ? { id } : {})),
    { stopReason: "toolUse" },
  );

export const reply = (text: string) => fauxAssistantMessage(text);
