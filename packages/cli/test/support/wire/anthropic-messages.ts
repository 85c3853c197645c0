/**
 * Anthropic Messages streaming, as api.anthropic.com sends it: named SSE events
 * (`message_start`, `content_block_start` / `_delta` / `_stop`, `ping`, `message_delta`,
 * `message_stop`), thinking blocks with a signature, tool input as `input_json_delta`
 * fragments, input and cache usage on `message_start` and output usage on `message_delta`.
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

/** The signature the server gives turn n's thinking (a real one is opaque too). */
export const anthropicSignature = (index: number) => `sig-${index}-EqQBCkgIARABGAIiQ`;

function write(res: ServerResponse, turn: WireTurn, model: string, index: number): void {
  openSse(res, { "request-id": `req_wire_${index}` });
  const event = (type: string, payload: Record<string, unknown>) => sendSse(res, { type, ...payload }, type);
  event("message_start", {
    message: {
      id: `msg_wire_${index}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: turn.usage.input,
        cache_creation_input_tokens: turn.usage.cacheWrite,
        cache_read_input_tokens: turn.usage.cacheRead,
        output_tokens: 1,
      },
    },
  });
  let block = 0;
  if (turn.thinking) {
    event("content_block_start", {
      index: block,
      content_block: { type: "thinking", thinking: "", signature: "" },
    });
    event("ping", {});
    event("content_block_delta", {
      index: block,
      delta: { type: "thinking_delta", thinking: turn.thinking },
    });
    event("content_block_delta", {
      index: block,
      delta: { type: "signature_delta", signature: anthropicSignature(index) },
    });
    event("content_block_stop", { index: block });
    block++;
  }
  if (turn.text) {
    event("content_block_start", { index: block, content_block: { type: "text", text: "" } });
    const half = Math.ceil(turn.text.length / 2);
    for (const part of [turn.text.slice(0, half), turn.text.slice(half)]) {
      event("content_block_delta", { index: block, delta: { type: "text_delta", text: part } });
    }
    event("content_block_stop", { index: block });
    block++;
  }
  if (turn.toolCall) {
    const { id, name, args } = turn.toolCall;
    event("content_block_start", { index: block, content_block: { type: "tool_use", id, name, input: {} } });
    const json = JSON.stringify(args);
    for (const part of [json.slice(0, 5), json.slice(5)]) {
      event("content_block_delta", { index: block, delta: { type: "input_json_delta", partial_json: part } });
    }
    event("content_block_stop", { index: block });
  }
  event("message_delta", {
    delta: { stop_reason: turn.toolCall ? "tool_use" : "end_turn", stop_sequence: null },
    usage: { output_tokens: turn.usage.output },
  });
  event("message_stop", {});
  res.end();
}

/** A Messages endpoint at `origin` (the SDK appends `/v1/messages`). */
export function startAnthropicServer(turns: WireScript, model: string): Promise<WireServer> {
  return startRecordingServer(turns, (res, turn, _request, index) => write(res, turn, model, index));
}
