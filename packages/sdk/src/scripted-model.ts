/**
 * A scripted model on pi-ai's faux provider: replies given compactly, every
 * request recorded. Used by the testing kit and by the CLI's
 * `model: { script: [...] }` / `rein run --script`, so it lives in the main entry
 * and has no test-runner code.
 *
 * Invariants: no network, no API key; each reply is consumed once, in order; a
 * request beyond the script gets the faux provider's error reply ("No more faux
 * responses queued"), which the harness persists as a closed error message;
 * `dispose()` drops what is left of the script; `skip(n)` drops the next n replies
 * (a resumed session already holds them). The provider lives only in the scripted
 * model's own collection (`models`), never in a global registry.
 */
import {
  type AssistantMessage,
  type Context,
  createModels,
  type FauxContentBlock,
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxToolCall,
  getCurrentSystemPrompt,
  getCurrentTools,
  getInitialSystemMessage,
  type JsonObject,
  type Model,
  type Models,
  type StreamOptions,
  type TranscriptContext,
} from "@earendil-works/pi-ai";

/** A tool call in a scripted reply. */
export interface ScriptToolCall {
  name: string;
  args?: Record<string, unknown>;
  id?: string;
}

/** One scripted reply, without functions (what a JSON script file can hold). */
export type ScriptReply =
  | string
  | { text: string; toolCalls?: undefined }
  | { toolCalls: ScriptToolCall[]; text?: string }
  | AssistantMessage;

/** What a reply function sees: the request the model received. */
export interface ScriptRequest {
  context: Context;
  options: StreamOptions | undefined;
  /** 1-based: which request this is. */
  callCount: number;
}

/** A scripted reply, or a function of the request that returns one. */
export type ScriptStep = ScriptReply | ((request: ScriptRequest) => ScriptReply | Promise<ScriptReply>);

export interface RecordedRequest {
  /** The context as sent (messages copied: later turns do not change it). */
  context: Context;
  options: StreamOptions | undefined;
  modelId: string;
}

export interface ScriptedModel {
  /** The pi-ai model to give the harness. */
  // biome-ignore lint/suspicious/noExplicitAny: any provider API.
  readonly model: Model<any>;
  /** The model collection that serves `model` (the harness option `models`). */
  readonly models: Models;
  /** Every request the model received, in order (since the last `forgetRequests()`). */
  readonly requests: readonly RecordedRequest[];
  /** Empties `requests`: a long-lived host (`rein mcp serve`) would otherwise keep every request. */
  forgetRequests(): void;
  /** Queues more replies after the ones already scripted. */
  append(steps: readonly ScriptStep[]): void;
  /** Replies not yet consumed. */
  pending(): number;
  /**
   * Drops the next `count` replies: a resumed session already holds them (the CLI
   * skips one per scripted reply in the session, so `--continue` goes on where the
   * script left off instead of starting again).
   */
  skip(count: number): void;
  /** Drops the replies not yet consumed (a later request gets the error reply). */
  dispose(): void;
}

/**
 * The request as Rein sent it: pi-ai hands providers a transcript whose leading system
 * message carries the system prompt and the tools; Rein's requests have no other
 * system message, so this is the `Context` the harness built.
 */
export function requestContext(transcript: TranscriptContext): Context {
  const messages = transcript.messages;
  const initial = getInitialSystemMessage(messages);
  return {
    ...(initial ? { systemPrompt: getCurrentSystemPrompt(messages) } : {}),
    messages: messages.filter((message) => message.role !== "system"),
    tools: getCurrentTools(messages),
  };
}

const isAssistantMessage = (value: unknown): value is AssistantMessage =>
  typeof value === "object" && value !== null && (value as { role?: unknown }).role === "assistant";

/** Turns a compact reply into the assistant message the faux provider streams. */
export function toAssistantMessage(reply: ScriptReply): AssistantMessage {
  if (typeof reply === "string") return fauxAssistantMessage(reply);
  if (isAssistantMessage(reply)) return reply;
  if (typeof reply === "object" && reply !== null && Array.isArray(reply.toolCalls)) {
    const blocks: FauxContentBlock[] = [];
    if (reply.text) blocks.push(fauxText(reply.text));
    for (const call of reply.toolCalls) {
      // Script files are JSON, so their arguments are too.
      blocks.push(fauxToolCall(call.name, (call.args ?? {}) as JsonObject, call.id ? { id: call.id } : {}));
    }
    return fauxAssistantMessage(blocks, { stopReason: "toolUse" });
  }
  if (typeof reply === "object" && reply !== null && typeof reply.text === "string") {
    return fauxAssistantMessage(reply.text);
  }
  throw new TypeError(
    `a script step must be a string, { text }, { toolCalls: [...] }, an assistant message or a function; got ${JSON.stringify(reply)}`,
  );
}

export interface ScriptedModelOptions {
  /** Model id (default the faux provider's). */
  modelId?: string;
  contextWindow?: number;
  /** Streaming speed; default instant. */
  tokensPerSecond?: number;
}

export function createScriptedModel(
  steps: readonly ScriptStep[] = [],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  const models =
    options.modelId !== undefined || options.contextWindow !== undefined
      ? [
          {
            id: options.modelId ?? "scripted",
            ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
          },
        ]
      : undefined;
  const faux = fauxProvider({
    ...(models ? { models } : {}),
    ...(options.tokensPerSecond !== undefined ? { tokensPerSecond: options.tokensPerSecond } : {}),
    // Large chunks: fewer message_update events, faster tests; streaming still happens.
    tokenSize: { min: 50, max: 50 },
  });
  const requests: RecordedRequest[] = [];
  const wrap =
    (step: ScriptStep) =>
    async (
      transcript: TranscriptContext,
      streamOptions: StreamOptions | undefined,
      state: { callCount: number },
      model: Model<string>,
    ) => {
      const context = requestContext(transcript);
      requests.push({
        context,
        options: streamOptions,
        modelId: model.id,
      });
      const reply =
        typeof step === "function"
          ? await step({ context, options: streamOptions, callCount: state.callCount })
          : step;
      return toAssistantMessage(reply);
    };
  // Validate compact replies now, so a typo fails where the script is written, not mid-run.
  for (const step of steps) if (typeof step !== "function") toAssistantMessage(step);
  // What the faux provider was last given; consumed = queued.length - pending.
  let queued = steps.map(wrap);
  faux.setResponses(queued);
  const collection = createModels();
  collection.setProvider(faux.provider);
  return {
    model: faux.getModel(),
    models: collection,
    requests,
    forgetRequests: () => {
      requests.length = 0;
    },
    append(more) {
      for (const step of more) if (typeof step !== "function") toAssistantMessage(step);
      const wrapped = more.map(wrap);
      // Only what is still unconsumed is kept: `skip` counts from there, and a host that
      // appends call after call (rein mcp serve) does not copy every reply ever given.
      const consumed = queued.length - faux.getPendingResponseCount();
      queued = [...queued.slice(consumed), ...wrapped];
      faux.appendResponses(wrapped);
    },
    skip(count) {
      if (!Number.isInteger(count) || count < 0)
        throw new RangeError(`skip: expected a count >= 0, got ${count}`);
      if (count === 0) return;
      const consumed = queued.length - faux.getPendingResponseCount();
      queued = queued.slice(consumed + count);
      faux.setResponses(queued);
    },
    pending: () => faux.getPendingResponseCount(),
    dispose: () => {
      queued = [];
      faux.setResponses([]);
    },
  };
}
