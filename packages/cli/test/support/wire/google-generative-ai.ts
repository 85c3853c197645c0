/**
 * Gemini `streamGenerateContent?alt=sse`, as generativelanguage.googleapis.com sends it:
 * unnamed SSE `data:` chunks, each a `GenerateContentResponse` (`candidates[0].content.parts`
 * with `thought: true` parts for thought summaries, a `functionCall` part carrying the
 * `thoughtSignature`, `finishReason: "STOP"` also after a function call) and
 * `usageMetadata` (cached tokens inside `promptTokenCount`, thoughts counted apart from
 * `candidatesTokenCount`), `modelVersion` and `responseId`.
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

/** The thought signature of turn n (opaque bytes, base64, in the real API). */
export const geminiSignature = (index: number) => Buffer.from(`wire-thought-${index}`).toString("base64");

function write(res: ServerResponse, turn: WireTurn, model: string, index: number): void {
  openSse(res);
  const { input, output, cacheRead, reasoning = 0 } = turn.usage;
  const usage = (final: boolean) => ({
    promptTokenCount: input + cacheRead,
    ...(final ? { candidatesTokenCount: output - reasoning } : {}),
    totalTokenCount: input + cacheRead + (final ? output : reasoning),
    ...(cacheRead > 0 ? { cachedContentTokenCount: cacheRead } : {}),
    promptTokensDetails: [{ modality: "TEXT", tokenCount: input + cacheRead }],
    thoughtsTokenCount: reasoning,
  });
  const chunk = (parts: unknown[], final = false) =>
    sendSse(res, {
      candidates: [
        { content: { parts, role: "model" }, index: 0, ...(final ? { finishReason: "STOP" } : {}) },
      ],
      usageMetadata: usage(final),
      modelVersion: model,
      responseId: `wire-${index}`,
    });
  if (turn.thinking) chunk([{ text: turn.thinking, thought: true }]);
  const last: unknown[] = [];
  if (turn.text) {
    const half = Math.ceil(turn.text.length / 2);
    chunk([{ text: turn.text.slice(0, half) }]);
    last.push({
      text: turn.text.slice(half),
      ...(turn.toolCall ? {} : { thoughtSignature: geminiSignature(index) }),
    });
  }
  if (turn.toolCall) {
    const { name, args } = turn.toolCall;
    last.push({ functionCall: { name, args }, thoughtSignature: geminiSignature(index) });
  }
  chunk(last, true);
  res.end();
}

/** A Generative Language endpoint: the model's `baseUrl` is `<origin>/v1beta`. */
export function startGeminiServer(turns: WireScript, model: string): Promise<WireServer> {
  return startRecordingServer(turns, (res, turn, _request, index) => write(res, turn, model, index));
}
