/**
 * Request shapes checked against wire captures: for each API family pi-ai speaks, the
 * built `rein run` talks to a loopback server that streams in that provider's own format,
 * with a current catalogue model pointed at it through a `models[]` entry. Each test pins
 * the request a real provider accepts (path, streaming, model id, the thinking fields the
 * model needs, the tool schema, the system prompt, the tool result sent back, Rein's
 * User-Agent) and that the streamed answer, the tool call and the usage are recorded.
 */
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanup } from "./support/rein-process.js";
import { anthropicSignature, startAnthropicServer } from "./support/wire/anthropic-messages.js";
import { bedrockSignature, startBedrockServer } from "./support/wire/bedrock-converse-stream.js";
import { startChatCompletionsServer } from "./support/wire/chat-completions.js";
import { geminiSignature, startGeminiServer } from "./support/wire/google-generative-ai.js";
import { openaiEncryptedReasoning, startOpenAIResponsesServer } from "./support/wire/openai-responses.js";
import { startRecordingServer, type WireServer } from "./support/wire/recording-server.js";
import {
  expectRecordedRun,
  LOOKUP_TOOL,
  PROMPT,
  runAgainst,
  SYSTEM_PROMPT,
  TOOL_RESULT,
  weatherTurns,
} from "./support/wire/run-rein.js";

afterAll(cleanup);

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("Anthropic Messages: anthropic/claude-opus-5-5", { timeout: 60_000 }, () => {
  it("streams to /v1/messages with adaptive thinking and an effort (never budget_tokens), the tool, and the tool result", async () => {
    const turns = weatherTurns("toolu_01WireLookup", true);
    server = await startAnthropicServer(turns, "claude-opus-5-5");
    const run = await runAgainst({
      provider: "anthropic",
      id: "claude-opus-5-5",
      baseUrl: server.origin,
      keyVariable: "ANTHROPIC_API_KEY",
      thinkingLevel: "high",
    });
    expectRecordedRun(run, server, { path: "/v1/messages?beta=true", turns, id: "claude-opus-5-5" });
    const [first, second] = server.requests;
    for (const request of [first, second]) {
      expect(request?.headers["x-api-key"]).toBe("wire-test-key");
      expect(request?.headers["anthropic-version"]).toBe("2023-06-01");
      const body = request?.body;
      expect(body).toMatchObject({ model: "claude-opus-5-5", stream: true, max_tokens: 128_000 });
      // Opus 5.5 takes adaptive thinking only: a budget is rejected.
      expect(body.thinking).toMatchObject({ type: "adaptive" });
      expect(["low", "medium", "high", "xhigh", "max"]).toContain(body.output_config?.effort);
      expect(JSON.stringify(body)).not.toContain("budget_tokens");
      expect(body.temperature).toBeUndefined();
      // The level asked for ("high") rides as the effort of the turn being generated.
      expect(body.messages.at(-1)).toEqual({
        role: "system",
        content: [],
        output_config: { effort: "high" },
      });
      expect(body.system).toEqual([
        { type: "text", text: SYSTEM_PROMPT, cache_control: { type: "ephemeral" } },
      ]);
      const tool = body.tools.find((t: { name: string }) => t.name === "lookup");
      expect(tool).toMatchObject({ name: LOOKUP_TOOL.name, description: LOOKUP_TOOL.description });
      expect(tool.input_schema).toEqual(LOOKUP_TOOL.parameters);
    }
    const betas = String(first?.headers["anthropic-beta"]).split(",");
    expect(betas).toContain("mid-conversation-output-config-2026-07-01");
    expect(betas).not.toContain("interleaved-thinking-2025-05-14");
    expect(first?.body.messages[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: PROMPT, cache_control: { type: "ephemeral" } }],
    });
    // The second request replays the signed thinking and the tool_use, then the tool_result.
    const replayed = second?.body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(replayed.content).toEqual([
      { type: "thinking", thinking: turns[0]?.thinking, signature: anthropicSignature(0) },
      { type: "tool_use", id: "toolu_01WireLookup", name: "lookup", input: { city: "Paris" } },
    ]);
    const results = second?.body.messages
      .flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? m.content : []))
      .filter((b: { type: string }) => b.type === "tool_result");
    expect(results).toEqual([
      {
        type: "tool_result",
        tool_use_id: "toolu_01WireLookup",
        content: TOOL_RESULT,
        is_error: false,
        cache_control: { type: "ephemeral" },
      },
    ]);
  });
});

describe("OpenAI Responses: openai/gpt-6.2-sol", { timeout: 60_000 }, () => {
  it("streams to /v1/responses with a reasoning effort GPT-6.2 accepts, the function tool, and the function_call_output", async () => {
    const turns = weatherTurns("call_WireLookup1", false);
    server = await startOpenAIResponsesServer(turns, "gpt-6.2-sol");
    const run = await runAgainst({
      provider: "openai",
      id: "gpt-6.2-sol",
      baseUrl: `${server.origin}/v1`,
      keyVariable: "OPENAI_API_KEY",
      thinkingLevel: "high",
    });
    expectRecordedRun(run, server, { path: "/v1/responses", turns, id: "gpt-6.2-sol" });
    const [first, second] = server.requests;
    for (const request of [first, second]) {
      expect(request?.headers.authorization).toBe("Bearer wire-test-key");
      const body = request?.body;
      expect(body).toMatchObject({
        model: "gpt-6.2-sol",
        stream: true,
        store: false,
        max_output_tokens: 128_000,
      });
      // GPT-6.x takes low..max (no "minimal"); the level asked for is the turn's configuration.
      expect(["low", "medium", "high", "xhigh", "max"]).toContain(body.reasoning.effort);
      expect(body.reasoning.summary).toBe("auto");
      expect(body.input.at(-1)).toEqual({ type: "configuration_update", reasoning: { effort: "high" } });
      // store: false needs the encrypted reasoning back to continue statelessly.
      expect(body.include).toEqual(["reasoning.encrypted_content"]);
      expect(body.temperature).toBeUndefined();
      const tools =
        body.input.find((item: { type?: string }) => item.type === "additional_tools")?.tools ?? body.tools;
      expect(tools).toEqual([
        {
          type: "function",
          name: LOOKUP_TOOL.name,
          description: LOOKUP_TOOL.description,
          parameters: LOOKUP_TOOL.parameters,
          strict: false,
        },
      ]);
      expect(body.input).toContainEqual({ role: "developer", content: SYSTEM_PROMPT });
      expect(body.input).toContainEqual({ role: "user", content: [{ type: "input_text", text: PROMPT }] });
    }
    // The second request replays the reasoning item (encrypted) and the call, then its output.
    const input = second?.body.input as Record<string, unknown>[];
    expect(input).toContainEqual(
      expect.objectContaining({
        type: "reasoning",
        id: "rs_wire_0",
        encrypted_content: openaiEncryptedReasoning(0),
      }),
    );
    expect(input).toContainEqual(
      expect.objectContaining({ type: "function_call", call_id: "call_WireLookup1", name: "lookup" }),
    );
    const call = input.find((item) => item.type === "function_call");
    expect(JSON.parse(String(call?.arguments))).toEqual({ city: "Paris" });
    expect(input).toContainEqual({
      type: "function_call_output",
      call_id: "call_WireLookup1",
      output: TOOL_RESULT,
    });
  });
});

describe("OpenAI chat completions: deepseek/deepseek-flash", { timeout: 60_000 }, () => {
  it("streams to /chat/completions with DeepSeek's thinking switch and effort, usage requested, reasoning_content sent back with the call", async () => {
    const turns = weatherTurns("call_00_WireLookup", false);
    server = await startChatCompletionsServer(turns, "deepseek-flash");
    const run = await runAgainst({
      provider: "deepseek",
      id: "deepseek-flash",
      baseUrl: server.origin,
      keyVariable: "DEEPSEEK_API_KEY",
      thinkingLevel: "high",
    });
    expectRecordedRun(run, server, { path: "/chat/completions", turns, id: "deepseek-flash" });
    const [first, second] = server.requests;
    for (const request of [first, second]) {
      expect(request?.headers.authorization).toBe("Bearer wire-test-key");
      const body = request?.body;
      expect(body).toMatchObject({
        model: "deepseek-flash",
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 384_000,
      });
      expect(body.thinking).toEqual({ type: "enabled" });
      // DeepSeek's efforts are "high" and "max"; "high" is what was asked for.
      expect(body.reasoning_effort).toBe("high");
      expect(body.tools).toEqual([
        {
          type: "function",
          function: {
            name: LOOKUP_TOOL.name,
            description: LOOKUP_TOOL.description,
            parameters: LOOKUP_TOOL.parameters,
            strict: false,
          },
        },
      ]);
      expect(body.messages.slice(0, 2)).toEqual([
        { role: "system", content: SYSTEM_PROMPT },
        { role: "user", content: PROMPT },
      ]);
    }
    const assistant = second?.body.messages.find((m: { role: string }) => m.role === "assistant");
    // Thinking mode with tools: the turn's reasoning_content must come back with its tool_calls.
    expect(assistant.reasoning_content).toBe(turns[0]?.thinking);
    expect(assistant.tool_calls).toEqual([
      {
        id: "call_00_WireLookup",
        type: "function",
        function: { name: "lookup", arguments: '{"city":"Paris"}' },
      },
    ]);
    expect(second?.body.messages.at(-1)).toMatchObject({
      role: "tool",
      tool_call_id: "call_00_WireLookup",
      content: TOOL_RESULT,
    });
  });
});

describe("Google Generative AI: google/gemini-4-argon", { timeout: 60_000 }, () => {
  it("streams to :streamGenerateContent?alt=sse with a thinking level, the function declaration, and the functionResponse", async () => {
    const turns = weatherTurns("unused", false);
    server = await startGeminiServer(turns, "gemini-4-argon");
    const run = await runAgainst({
      provider: "google",
      id: "gemini-4-argon",
      baseUrl: `${server.origin}/v1beta`,
      keyVariable: "GEMINI_API_KEY",
      thinkingLevel: "high",
    });
    expectRecordedRun(run, server, {
      path: "/v1beta/models/gemini-4-argon:streamGenerateContent?alt=sse",
      turns,
      id: "gemini-4-argon",
    });
    const [first, second] = server.requests;
    for (const request of [first, second]) {
      expect(request?.headers["x-goog-api-key"]).toBe("wire-test-key");
      const body = request?.body;
      // Gemini 3+ thinks by level (a budget is the 2.5 form); "high" is what was asked for.
      expect(body.generationConfig).toEqual({
        maxOutputTokens: 32_768,
        thinkingConfig: { includeThoughts: true, thinkingLevel: "HIGH" },
      });
      expect(JSON.stringify(body)).not.toContain("thinkingBudget");
      expect(body.systemInstruction).toMatchObject({ parts: [{ text: SYSTEM_PROMPT }] });
      expect(body.tools).toEqual([
        {
          functionDeclarations: [
            {
              name: LOOKUP_TOOL.name,
              description: LOOKUP_TOOL.description,
              parametersJsonSchema: LOOKUP_TOOL.parameters,
            },
          ],
        },
      ]);
      expect(body.contents[0]).toEqual({ role: "user", parts: [{ text: PROMPT }] });
    }
    // The second request replays the call with its thought signature, then the response.
    const model = second?.body.contents.find((c: { role: string }) => c.role === "model");
    expect(model.parts).toContainEqual(
      expect.objectContaining({
        functionCall: expect.objectContaining({ name: "lookup", args: { city: "Paris" } }),
        thoughtSignature: geminiSignature(0),
      }),
    );
    const answer = second?.body.contents.at(-1);
    expect(answer.role).toBe("user");
    expect(answer.parts).toContainEqual({
      functionResponse: expect.objectContaining({ name: "lookup", response: { output: TOOL_RESULT } }),
    });
  });
});

/** Static keys only: no profile, no config files, no instance metadata lookups. */
const AWS_ENV = {
  AWS_SECRET_ACCESS_KEY: "wire-test-secret",
  AWS_REGION: "us-east-1",
  AWS_PROFILE: "",
  AWS_CONFIG_FILE: "/nonexistent/aws-config",
  AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/aws-credentials",
  AWS_EC2_METADATA_DISABLED: "true",
};

describe("Bedrock ConverseStream: amazon-bedrock/global.anthropic.claude-opus-5-5", {
  timeout: 60_000,
}, () => {
  it("signs a SigV4 ConverseStream over HTTP/2 with adaptive thinking and an effort, the toolSpec, and the toolResult, and decodes the event stream", async () => {
    const turns = weatherTurns("tooluse_WireLookup01", true);
    server = await startBedrockServer(turns);
    const id = "global.anthropic.claude-opus-5-5";
    const run = await runAgainst({
      provider: "amazon-bedrock",
      id,
      baseUrl: server.origin,
      keyVariable: "AWS_ACCESS_KEY_ID",
      thinkingLevel: "high",
      env: AWS_ENV,
    });
    // The AWS SDK sends its own User-Agent with Rein's appended as one product token.
    const userAgent = /^aws-sdk-js\/[\d.]+ .* rein\/\d+\.\d+\.\d+$/;
    expectRecordedRun(run, server, { path: `/model/${id}/converse-stream`, turns, id, userAgent });
    const [first, second] = server.requests;
    for (const request of [first, second]) {
      expect(request?.headers.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=wire-test-key\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[^,]*x-amz-date[^,]*, Signature=[0-9a-f]{64}$/,
      );
      expect(request?.headers["amz-sdk-request"]).toBe("attempt=1; max=1");
      expect(request?.headers["x-amz-user-agent"]).toMatch(/^aws-sdk-js\/[\d.]+ rein\/\d+\.\d+\.\d+$/);
      const body = request?.body;
      expect(body.inferenceConfig).toEqual({ maxTokens: 128_000 });
      // Claude on Bedrock: the Anthropic thinking fields ride in additionalModelRequestFields.
      const fields = body.additionalModelRequestFields;
      expect(fields.thinking).toMatchObject({ type: "adaptive" });
      expect(fields.output_config).toEqual({ effort: "high" });
      expect(JSON.stringify(body)).not.toContain("budget_tokens");
      expect(body.system[0]).toEqual({ text: SYSTEM_PROMPT });
      expect(body.toolConfig.tools).toEqual([
        {
          toolSpec: {
            name: LOOKUP_TOOL.name,
            description: LOOKUP_TOOL.description,
            inputSchema: { json: LOOKUP_TOOL.parameters },
          },
        },
      ]);
      expect(body.messages[0].content[0]).toEqual({ text: PROMPT });
    }
    // The second request replays the signed reasoning and the toolUse, then the toolResult.
    const assistant = second?.body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content).toEqual([
      { reasoningContent: { reasoningText: { text: turns[0]?.thinking, signature: bedrockSignature(0) } } },
      { toolUse: { toolUseId: "tooluse_WireLookup01", name: "lookup", input: { city: "Paris" } } },
    ]);
    const results = second?.body.messages
      .flatMap((m: { content: Record<string, unknown>[] }) => m.content)
      .filter((block: Record<string, unknown>) => block.toolResult);
    expect(results).toEqual([
      {
        toolResult: {
          toolUseId: "tooluse_WireLookup01",
          content: [{ text: TOOL_RESULT }],
          status: "success",
        },
      },
    ]);
  });

  it("a throttled ConverseStream is sent once: the AWS SDK's own retries are off, as every client's are", async () => {
    server = await startRecordingServer(
      weatherTurns("tooluse_Throttled", true),
      (res) => {
        res.writeHead(429, { "content-type": "application/json", "x-amzn-errortype": "ThrottlingException" });
        res.end(JSON.stringify({ message: "Too many requests, please wait before trying again." }));
      },
      { http2: true },
    );
    const { result } = await runAgainst({
      provider: "amazon-bedrock",
      id: "global.anthropic.claude-opus-5-5",
      baseUrl: server.origin,
      keyVariable: "AWS_ACCESS_KEY_ID",
      thinkingLevel: "high",
      env: AWS_ENV,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Too many requests");
    expect(server.requests.map((request) => request.headers["amz-sdk-request"])).toEqual([
      "attempt=1; max=1",
    ]);
  });
});
