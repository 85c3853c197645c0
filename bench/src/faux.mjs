/**
 * The one model every agent talks to: pi-ai's faux provider (`fauxProvider()`), in one
 * `Models` collection (`createModels()`) that serves every contender, with no artificial
 * delay (no `tokensPerSecond`) and a fixed token size so each reply streams as one delta
 * per content block, identically for every contender.
 *
 * Two stream functions wrap the same `models.streamSimple` (the signature Rein's
 * `streamFn` and pi-agent-core's `streamFn` both take):
 * - `full`: the provider sees the whole context. pi-ai's faux provider then
 *   re-serialises the entire transcript on every call (its usage estimate), a
 *   cost that grows with the transcript and is not any agent's own.
 * - `flat`: the provider sees only the system prompt and tools and the last message,
 *   which isolates each agent's own per-turn bookkeeping. pi-agent-core hands its
 *   stream function a transcript whose leading `system` message carries the prompt and
 *   tools; Rein hands it `systemPrompt` and `tools` beside the messages (pi-ai folds
 *   them into that same leading message); both keep them.
 */
import {
  createModels,
  fauxAssistantMessage,
  fauxProvider,
  fauxText,
  fauxToolCall,
} from "@earendil-works/pi-ai";
// typebox through the harness (one copy: the one its own tools use).
import { Type } from "@rein/harness";

const faux = fauxProvider({ tokenSize: { min: 50, max: 50 } });

/** The collection every contender streams through (Rein's `models` option takes it as is). */
export const models = createModels();
models.setProvider(faux.provider);

export const model = faux.getModel();

/** The last message, after the leading system message when the transcript has one. */
function lastOnly(messages) {
  const last = messages.at(-1);
  const first = messages[0];
  return first !== undefined && first !== last && first.role === "system" ? [first, last] : [last];
}

export const streamFns = {
  full: (m, context, options) => models.streamSimple(m, context, options),
  flat: (m, context, options) =>
    models.streamSimple(m, { ...context, messages: lastOnly(context.messages) }, options),
};

/** Queues `toolTurns` replies that each call `echo` once, then one final text reply. */
export function scriptToolTurns(toolTurns) {
  const steps = new Array(toolTurns + 1);
  for (let i = 0; i < toolTurns; i++) {
    steps[i] = fauxAssistantMessage([fauxToolCall("echo", { text: `ping ${i}` }, { id: `call_${i}` })], {
      stopReason: "toolUse",
    });
  }
  steps[toolTurns] = fauxAssistantMessage([fauxText("done")]);
  faux.setResponses(steps);
}

/** Replies still queued: a run that consumed its whole script leaves 0. */
export const pendingReplies = () => faux.getPendingResponseCount();

const parameters = Type.Object({ text: Type.String() });
const description = "Echo the text back";
const echo = (text) => ({ content: [{ type: "text", text: `echo: ${text}` }] });

/** The echo tool in Rein's shape: `execute(args, context)`. */
export const reinEcho = {
  name: "echo",
  description,
  parameters,
  risk: "read",
  execute: async (args) => echo(args.text),
};

/** The echo tool in pi-agent-core's shape: `execute(toolCallId, params, signal, onUpdate)`. */
export const piEcho = {
  name: "echo",
  label: "Echo",
  description,
  parameters,
  execute: async (_toolCallId, params) => ({ ...echo(params.text), details: undefined }),
};

/** The tool as the floor hands it to the provider (what a request carries). */
export const echoDefinition = { name: "echo", description, parameters };
export const runEcho = async (args) => echo(args.text);
