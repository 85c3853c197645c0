/**
 * OpenAI chat completions streaming as DeepSeek's API sends it: unnamed SSE `data:`
 * chunks (`chat.completion.chunk`), reasoning as `delta.reasoning_content`, tool calls as
 * indexed `delta.tool_calls` fragments, `finish_reason` on the last choice chunk with the
 * usage (`stream_options.include_usage`; cache hits as `prompt_cache_hit_tokens` and
 * `prompt_tokens_details.cached_tokens`, both inside `prompt_tokens`), then `data: [DONE]`.
 */
import type { ServerResponse } from "node:http";
import {
  openSse,
  sendSse,
  startRecordingServer,
  type WireServer,
  type WireTurn,
} from "./recording-server.js";

function write(res: ServerResponse, turn: WireTurn, model: string, index: number): void {
  openSse(res);
  const id = `wire-${index}`;
  const chunk = (
    delta: Record<string, unknown>,
    extra: Record<string, unknown> = {},
    finish: string | null = null,
  ) =>
    sendSse(res, {
      id,
      object: "chat.completion.chunk",
      created: 1_796_000_000 + index,
      model,
      system_fingerprint: "fp_wire",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...extra,
    });
  chunk({ role: "assistant", content: null, reasoning_content: "" });
  if (turn.thinking) chunk({ content: null, reasoning_content: turn.thinking });
  if (turn.text) {
    const half = Math.ceil(turn.text.length / 2);
    for (const content of [turn.text.slice(0, half), turn.text.slice(half)])
      chunk({ content, reasoning_content: null });
  }
  if (turn.toolCall) {
    const { id: callId, name, args } = turn.toolCall;
    const json = JSON.stringify(args);
    chunk({ tool_calls: [{ index: 0, id: callId, type: "function", function: { name, arguments: "" } }] });
    for (const part of [json.slice(0, 5), json.slice(5)])
      chunk({ tool_calls: [{ index: 0, function: { arguments: part } }] });
  }
  const { input, output, cacheRead, reasoning = 0 } = turn.usage;
  chunk(
    { content: "" },
    {
      usage: {
        prompt_tokens: input + cacheRead,
        completion_tokens: output,
        total_tokens: input + cacheRead + output,
        prompt_tokens_details: { cached_tokens: cacheRead },
        completion_tokens_details: { reasoning_tokens: reasoning },
        prompt_cache_hit_tokens: cacheRead,
        prompt_cache_miss_tokens: input,
      },
    },
    turn.toolCall ? "tool_calls" : "stop",
  );
  sendSse(res, "[DONE]");
  res.end();
}

/** A chat completions endpoint: requests go to `<baseUrl>/chat/completions`. */
export function startChatCompletionsServer(turns: WireTurn[], model: string): Promise<WireServer> {
  return startRecordingServer(turns, (res, turn, _request, index) => write(res, turn, model, index));
}
