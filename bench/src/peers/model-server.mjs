/**
 * The peers benchmark's scripted model server on 127.0.0.1: one HTTP server that
 * answers Anthropic Messages (`POST …/v1/messages`), OpenAI Responses (`POST
 * …/responses`) and OpenAI chat completions (`POST …/chat/completions`), always
 * streaming (SSE), as the real APIs send them.
 *
 * Stateless script: a request that offers tools gets a shell tool call while the
 * conversation holds fewer tool results than the run's `calls`, then a short text
 * answer; a request without tools (a title or summary side request) gets text and
 * is not counted. Every counted request is timestamped on arrival and every
 * response on its end, so the driver can tell start → first request and last
 * response → exit apart from the model's own time (which is ~0 here).
 */
import { createServer } from "node:http";
import { now } from "../stats.mjs";

/** The shell tool a request offers, by the names the agents give it, and how its arguments look. */
const SHELL_TOOLS = [
  { name: "bash", args: (command) => ({ command }) },
  { name: "Bash", args: (command) => ({ command, description: "print a line" }) },
  { name: "shell", args: (command) => ({ command: ["bash", "-lc", command] }) },
  { name: "exec_command", args: (command) => ({ cmd: command }) },
  { name: "shell_command", args: (command) => ({ command }) },
];

function toolNames(api, body) {
  const tools = Array.isArray(body?.tools) ? body.tools : [];
  return tools.map((tool) => (api === "chat" ? tool.function?.name : tool.name)).filter(Boolean);
}

/** Tool results already in the conversation: how many calls have been answered. */
function answered(api, body) {
  if (api === "anthropic") {
    let n = 0;
    for (const message of body.messages ?? [])
      if (Array.isArray(message.content))
        n += message.content.filter((block) => block.type === "tool_result").length;
    return n;
  }
  if (api === "responses")
    return (Array.isArray(body.input) ? body.input : []).filter(
      (item) => item.type === "function_call_output" || item.type === "custom_tool_call_output",
    ).length;
  return (body.messages ?? []).filter((message) => message.role === "tool").length;
}

function sse(res, data, event) {
  res.write(
    `${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`,
  );
}

function open(res) {
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" });
}

function writeAnthropic(res, turn, model, index) {
  open(res);
  const event = (type, payload) => sse(res, { type, ...payload }, type);
  const usage = {
    input_tokens: 20,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: 1,
  };
  event("message_start", {
    message: {
      id: `msg_${index}`,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage,
    },
  });
  if (turn.text) {
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    event("content_block_delta", { index: 0, delta: { type: "text_delta", text: turn.text } });
    event("content_block_stop", { index: 0 });
  } else {
    const { id, name, args } = turn.call;
    event("content_block_start", { index: 0, content_block: { type: "tool_use", id, name, input: {} } });
    event("content_block_delta", {
      index: 0,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(args) },
    });
    event("content_block_stop", { index: 0 });
  }
  event("message_delta", {
    delta: { stop_reason: turn.text ? "end_turn" : "tool_use", stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  event("message_stop", {});
}

function writeResponses(res, turn, model, index) {
  open(res);
  let sequence = 0;
  const event = (type, payload) => sse(res, { type, sequence_number: sequence++, ...payload }, type);
  const response = {
    id: `resp_${index}`,
    object: "response",
    created_at: 1_796_000_000 + index,
    model,
    status: "in_progress",
    output: [],
    usage: null,
  };
  event("response.created", { response });
  let item;
  if (turn.text) {
    const at = { item_id: `msg_${index}`, output_index: 0, content_index: 0 };
    const base = { id: at.item_id, type: "message", role: "assistant" };
    event("response.output_item.added", {
      output_index: 0,
      item: { ...base, status: "in_progress", content: [] },
    });
    event("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } });
    event("response.output_text.delta", { ...at, delta: turn.text, logprobs: [] });
    event("response.output_text.done", { ...at, text: turn.text, logprobs: [] });
    const part = { type: "output_text", text: turn.text, annotations: [] };
    event("response.content_part.done", { ...at, part });
    item = { ...base, status: "completed", content: [part] };
  } else {
    const { id, name, args } = turn.call;
    const json = JSON.stringify(args);
    const base = { id: `fc_${index}`, type: "function_call", call_id: id, name };
    event("response.output_item.added", {
      output_index: 0,
      item: { ...base, status: "in_progress", arguments: "" },
    });
    event("response.function_call_arguments.delta", { item_id: base.id, output_index: 0, delta: json });
    event("response.function_call_arguments.done", { item_id: base.id, output_index: 0, arguments: json });
    item = { ...base, status: "completed", arguments: json };
  }
  event("response.output_item.done", { output_index: 0, item });
  event("response.completed", {
    response: {
      ...response,
      status: "completed",
      output: [item],
      usage: {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 25,
      },
    },
  });
}

function writeChat(res, turn, model, index) {
  open(res);
  const chunk = (delta, finish = null, extra = {}) =>
    sse(res, {
      id: `chat_${index}`,
      object: "chat.completion.chunk",
      created: 1_796_000_000 + index,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    });
  chunk({ role: "assistant", content: "" });
  if (turn.text) chunk({ content: turn.text });
  else {
    const { id, name, args } = turn.call;
    chunk({
      tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
    });
  }
  chunk({}, turn.text ? "stop" : "tool_calls", {
    usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
  });
  sse(res, "[DONE]");
}

const WRITERS = { anthropic: writeAnthropic, responses: writeResponses, chat: writeChat };

function apiOf(method, url) {
  if (method !== "POST") return undefined;
  const pathname = url.split("?")[0];
  if (pathname.endsWith("/messages")) return "anthropic";
  if (pathname.endsWith("/responses")) return "responses";
  if (pathname.endsWith("/chat/completions")) return "chat";
  return undefined;
}

/**
 * Starts the server. `server.expect({ calls })` arms it for one run and returns the
 * run's record: `{ requests: [arrival ms], responses: [end ms], side, unknown }`.
 */
export function startModelServer() {
  let run = { calls: 0, requests: [], responses: [], side: 0, unknown: [] };
  const server = createServer((req, res) => {
    const arrived = now();
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const api = apiOf(req.method, req.url);
      if (!api) {
        run.unknown.push(`${req.method} ${req.url}`);
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { type: "not_found_error", message: `no route ${req.url}` } }));
        return;
      }
      let body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const names = toolNames(api, body);
      const shell = SHELL_TOOLS.find((tool) => names.includes(tool.name));
      const model = body.model ?? "bench";
      if (!shell) {
        run.side++;
        WRITERS[api](res, { text: "ok" }, model, 0);
        res.end();
        return;
      }
      const index = run.requests.length;
      run.requests.push(arrived);
      const done = answered(api, body);
      const turn =
        done < run.calls
          ? { call: { id: `call_${done + 1}`, name: shell.name, args: shell.args(`echo call-${done + 1}`) } }
          : { text: "done" };
      if (run.lastBody !== undefined) run.lastBody = body;
      WRITERS[api](res, turn, model, index);
      res.end(() => run.responses.push(now()));
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        origin: `http://127.0.0.1:${port}`,
        expect({ calls, keepBody = false }) {
          run = {
            calls,
            requests: [],
            responses: [],
            side: 0,
            unknown: [],
            lastBody: keepBody ? null : undefined,
          };
          return run;
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
