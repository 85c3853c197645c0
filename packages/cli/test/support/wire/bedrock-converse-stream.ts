/**
 * Bedrock `ConverseStream`, as bedrock-runtime.<region>.amazonaws.com sends it: HTTP/2,
 * `application/vnd.amazon.eventstream` binary frames (the AWS event-stream encoding:
 * prelude with lengths and CRC32, typed headers `:event-type` / `:content-type` /
 * `:message-type`, a JSON payload padded with `p`, message CRC32), events `messageStart`,
 * `contentBlockDelta` (reasoning text and signature, text), `contentBlockStart` for a tool
 * use, `contentBlockStop`, `messageStop` and `metadata` with the usage.
 */
import type { ServerResponse } from "node:http";
import { crc32 } from "node:zlib";
import { startRecordingServer, type WireServer, type WireTurn } from "./recording-server.js";

/** The signature Bedrock gives turn n's reasoning. */
export const bedrockSignature = (index: number) => `bedrock-sig-${index}-ErcBCkgIBhAB`;

const STRING_HEADER = 7;

/** One event-stream message: string headers, then the payload, framed and checksummed. */
export function eventStreamMessage(headers: Record<string, string>, payload: Buffer): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name, "utf8");
      const valueBytes = Buffer.from(value, "utf8");
      const head = Buffer.alloc(1 + nameBytes.length + 1 + 2);
      head.writeUInt8(nameBytes.length, 0);
      nameBytes.copy(head, 1);
      head.writeUInt8(STRING_HEADER, 1 + nameBytes.length);
      head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
      return Buffer.concat([head, valueBytes]);
    }),
  );
  const total = 12 + headerBytes.length + payload.length + 4;
  const prelude = Buffer.alloc(12);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(headerBytes.length, 4);
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8);
  const body = Buffer.concat([prelude, headerBytes, payload]);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(crc32(body), 0);
  return Buffer.concat([body, trailer]);
}

function write(res: ServerResponse, turn: WireTurn, index: number): void {
  res.writeHead(200, {
    "content-type": "application/vnd.amazon.eventstream",
    "x-amzn-requestid": `wire-request-${index}`,
  });
  const event = (type: string, payload: Record<string, unknown>) => {
    // Bedrock pads every event's JSON with `p` so that sizes do not leak content.
    const json = JSON.stringify({
      ...payload,
      p: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJ".slice(0, 8 + (index % 5)),
    });
    res.write(
      eventStreamMessage(
        { ":event-type": type, ":content-type": "application/json", ":message-type": "event" },
        Buffer.from(json, "utf8"),
      ),
    );
  };
  event("messageStart", { role: "assistant" });
  let block = 0;
  if (turn.thinking) {
    event("contentBlockDelta", {
      contentBlockIndex: block,
      delta: { reasoningContent: { text: turn.thinking } },
    });
    event("contentBlockDelta", {
      contentBlockIndex: block,
      delta: { reasoningContent: { signature: bedrockSignature(index) } },
    });
    event("contentBlockStop", { contentBlockIndex: block });
    block++;
  }
  if (turn.text) {
    const half = Math.ceil(turn.text.length / 2);
    for (const text of [turn.text.slice(0, half), turn.text.slice(half)]) {
      event("contentBlockDelta", { contentBlockIndex: block, delta: { text } });
    }
    event("contentBlockStop", { contentBlockIndex: block });
    block++;
  }
  if (turn.toolCall) {
    const { id, name, args } = turn.toolCall;
    event("contentBlockStart", { contentBlockIndex: block, start: { toolUse: { toolUseId: id, name } } });
    const json = JSON.stringify(args);
    for (const input of [json.slice(0, 5), json.slice(5)]) {
      event("contentBlockDelta", { contentBlockIndex: block, delta: { toolUse: { input } } });
    }
    event("contentBlockStop", { contentBlockIndex: block });
  }
  event("messageStop", { stopReason: turn.toolCall ? "tool_use" : "end_turn" });
  const { input, output, cacheRead, cacheWrite } = turn.usage;
  event("metadata", {
    usage: {
      inputTokens: input,
      outputTokens: output,
      totalTokens: input + output + cacheRead + cacheWrite,
      cacheReadInputTokens: cacheRead,
      cacheWriteInputTokens: cacheWrite,
    },
    metrics: { latencyMs: 420 },
  });
  res.end();
}

/** A Bedrock runtime endpoint at `origin` (HTTP/2 cleartext); requests go to `/model/<id>/converse-stream`. */
export function startBedrockServer(turns: WireTurn[]): Promise<WireServer> {
  return startRecordingServer(turns, (res, turn, _request, index) => write(res, turn, index), {
    http2: true,
  });
}
