/**
 * OpenAI Responses streaming, as api.openai.com sends it: named SSE events with a
 * `sequence_number` (`response.created`, `response.output_item.added` / `.done`, reasoning
 * summary parts, `response.output_text.delta`, `response.function_call_arguments.delta` /
 * `.done`, `response.completed`), reasoning items with `encrypted_content` (the request
 * sets `store: false`), and usage on `response.completed` with cached tokens counted
 * inside `input_tokens`.
 */
import type { ServerResponse } from "node:http";
import {
  openSse,
  sendSse,
  startRecordingServer,
  type WireScript,
  type WireServer,
  type WireTurn,
} from "./recording-server.js";

/** The encrypted reasoning turn n carries (sent back by a stateless client). */
export const openaiEncryptedReasoning = (index: number) => `gAAAAAB-wire-${index}`;

function write(res: ServerResponse, turn: WireTurn, model: string, index: number): void {
  openSse(res, { "x-request-id": `req_wire_${index}`, "openai-processing-ms": "12" });
  let sequence = 0;
  const event = (type: string, payload: Record<string, unknown>) =>
    sendSse(res, { type, sequence_number: sequence++, ...payload }, type);
  const response = {
    id: `resp_wire_${index}`,
    object: "response",
    created_at: 1_796_000_000 + index,
    model,
    status: "in_progress",
    output: [] as unknown[],
    usage: null as unknown,
  };
  event("response.created", { response });
  event("response.in_progress", { response });
  const output: Record<string, unknown>[] = [];
  if (turn.thinking) {
    const item_id = `rs_wire_${index}`;
    const output_index = output.length;
    event("response.output_item.added", {
      output_index,
      item: { id: item_id, type: "reasoning", summary: [] },
    });
    const part = { type: "summary_text", text: turn.thinking };
    const at = { item_id, output_index, summary_index: 0 };
    event("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
    event("response.reasoning_summary_text.delta", { ...at, delta: turn.thinking });
    event("response.reasoning_summary_text.done", { ...at, text: turn.thinking });
    event("response.reasoning_summary_part.done", { ...at, part });
    const item = {
      id: item_id,
      type: "reasoning",
      summary: [part],
      encrypted_content: openaiEncryptedReasoning(index),
    };
    event("response.output_item.done", { output_index, item });
    output.push(item);
  }
  if (turn.text) {
    const item_id = `msg_wire_${index}`;
    const output_index = output.length;
    const base = { id: item_id, type: "message", role: "assistant" };
    event("response.output_item.added", {
      output_index,
      item: { ...base, status: "in_progress", content: [] },
    });
    const at = { item_id, output_index, content_index: 0 };
    event("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } });
    const half = Math.ceil(turn.text.length / 2);
    for (const delta of [turn.text.slice(0, half), turn.text.slice(half)]) {
      event("response.output_text.delta", { ...at, delta, logprobs: [] });
    }
    event("response.output_text.done", { ...at, text: turn.text, logprobs: [] });
    const part = { type: "output_text", text: turn.text, annotations: [] };
    event("response.content_part.done", { ...at, part });
    const item = { ...base, status: "completed", content: [part] };
    event("response.output_item.done", { output_index, item });
    output.push(item);
  }
  if (turn.toolCall) {
    const item_id = `fc_wire_${index}`;
    const output_index = output.length;
    const { id: call_id, name, args } = turn.toolCall;
    const base = { id: item_id, type: "function_call", call_id, name };
    event("response.output_item.added", {
      output_index,
      item: { ...base, status: "in_progress", arguments: "" },
    });
    const json = JSON.stringify(args);
    for (const delta of [json.slice(0, 5), json.slice(5)]) {
      event("response.function_call_arguments.delta", { item_id, output_index, delta });
    }
    event("response.function_call_arguments.done", { item_id, output_index, arguments: json });
    const item = { ...base, status: "completed", arguments: json };
    event("response.output_item.done", { output_index, item });
    output.push(item);
  }
  const { input, output: outputTokens, cacheRead, reasoning = 0 } = turn.usage;
  event("response.completed", {
    response: {
      ...response,
      status: "completed",
      output,
      usage: {
        input_tokens: input + cacheRead,
        input_tokens_details: { cached_tokens: cacheRead },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: reasoning },
        total_tokens: input + cacheRead + outputTokens,
      },
    },
  });
  res.end();
}

/** A Responses endpoint: the model's `baseUrl` is `<origin>/v1`, requests go to `/v1/responses`. */
export function startOpenAIResponsesServer(turns: WireScript, model: string): Promise<WireServer> {
  return startRecordingServer(turns, (res, turn, _request, index) => write(res, turn, model, index));
}
