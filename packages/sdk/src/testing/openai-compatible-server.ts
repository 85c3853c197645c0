/**
 * A local OpenAI-compatible chat-completions server on 127.0.0.1 that streams
 * scripted replies as server-sent events (`POST <baseUrl>/chat/completions`), so
 * a test drives pi-ai's real HTTP client code path with no network. Invariant:
 * it binds loopback only, on a free port, and records every request body.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Token counts the endpoint reports for a reply (OpenAI's `usage` chunk); none when absent. */
export interface EndpointUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /** Of `prompt_tokens`, how many were read from the provider's cache. */
  cached_tokens?: number;
}

export type EndpointReply =
  | { text: string; usage?: EndpointUsage }
  | { toolCall: { name: string; args: Record<string, unknown>; id: string }; usage?: EndpointUsage };

export interface OpenAICompatibleServer {
  baseUrl: string;
  /** Parsed JSON bodies of every request, in order. */
  requests: Record<string, unknown>[];
  close(): Promise<void>;
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 0,
    model: "scripted-endpoint",
    choices: [{ index: 0, delta, finish_reason: finish }],
  })}\n\n`;

const usageChunk = (usage: EndpointUsage) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-1",
    object: "chat.completion.chunk",
    created: 0,
    model: "scripted-endpoint",
    choices: [],
    usage: {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.prompt_tokens + usage.completion_tokens,
      ...(usage.cached_tokens !== undefined
        ? { prompt_tokens_details: { cached_tokens: usage.cached_tokens } }
        : {}),
    },
  })}\n\n`;

function sse(reply: EndpointReply): string[] {
  const parts = events(reply);
  // The usage chunk comes last, before [DONE], as OpenAI sends it with stream_options.include_usage.
  if (reply.usage) parts.splice(parts.length - 1, 0, usageChunk(reply.usage));
  return parts;
}

function events(reply: EndpointReply): string[] {
  if ("text" in reply) {
    const half = Math.ceil(reply.text.length / 2);
    return [
      chunk({ role: "assistant", content: reply.text.slice(0, half) }),
      chunk({ content: reply.text.slice(half) }),
      chunk({}, "stop"),
      "data: [DONE]\n\n",
    ];
  }
  const args = JSON.stringify(reply.toolCall.args);
  return [
    chunk({
      role: "assistant",
      tool_calls: [
        {
          index: 0,
          id: reply.toolCall.id,
          type: "function",
          function: { name: reply.toolCall.name, arguments: "" },
        },
      ],
    }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 5) } }] }),
    chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(5) } }] }),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ];
}

export async function startOpenAICompatibleServer(replies: EndpointReply[]): Promise<OpenAICompatibleServer> {
  const requests: Record<string, unknown>[] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (part) => {
      body += part;
    });
    request.on("end", () => {
      if (request.method !== "POST" || !request.url?.endsWith("/chat/completions")) {
        response.writeHead(404).end();
        return;
      }
      requests.push(JSON.parse(body) as Record<string, unknown>);
      const reply = replies.shift();
      if (!reply) {
        response
          .writeHead(500, { "content-type": "application/json" })
          .end('{"error":{"message":"no more replies"}}');
        return;
      }
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const part of sse(reply)) response.write(part);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
