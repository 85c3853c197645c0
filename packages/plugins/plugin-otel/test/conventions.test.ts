/**
 * The names the plugin emits are the published OpenTelemetry ones: compared with
 * the semantic-conventions package (a dev dependency), so a renamed convention
 * fails here instead of producing odd traces.
 */
import * as semconv from "@opentelemetry/semantic-conventions";
import * as incubating from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import { ATTR, METRIC, OPERATION } from "../src/conventions.js";
import * as otel from "../src/index.js";

const published: Record<keyof typeof ATTR, string> = {
  operationName: incubating.ATTR_GEN_AI_OPERATION_NAME,
  providerName: incubating.ATTR_GEN_AI_PROVIDER_NAME,
  requestModel: incubating.ATTR_GEN_AI_REQUEST_MODEL,
  responseModel: incubating.ATTR_GEN_AI_RESPONSE_MODEL,
  responseId: incubating.ATTR_GEN_AI_RESPONSE_ID,
  finishReasons: incubating.ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  inputTokens: incubating.ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  outputTokens: incubating.ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  cacheReadTokens: incubating.ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  cacheWriteTokens: incubating.ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  reasoningTokens: incubating.ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  conversationId: incubating.ATTR_GEN_AI_CONVERSATION_ID,
  agentName: incubating.ATTR_GEN_AI_AGENT_NAME,
  agentId: incubating.ATTR_GEN_AI_AGENT_ID,
  toolName: incubating.ATTR_GEN_AI_TOOL_NAME,
  toolCallId: incubating.ATTR_GEN_AI_TOOL_CALL_ID,
  toolType: incubating.ATTR_GEN_AI_TOOL_TYPE,
  toolArguments: incubating.ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  toolResult: incubating.ATTR_GEN_AI_TOOL_CALL_RESULT,
  tokenType: incubating.ATTR_GEN_AI_TOKEN_TYPE,
  errorType: semconv.ATTR_ERROR_TYPE,
};

describe("GenAI semantic conventions", () => {
  it("every attribute name is the published one", () => {
    expect(ATTR).toEqual(published);
  });

  it("operation and metric names are the published ones (apply_guardrail is Rein's until one is published)", () => {
    expect(OPERATION.invokeAgent).toBe(incubating.GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT);
    expect(OPERATION.chat).toBe(incubating.GEN_AI_OPERATION_NAME_VALUE_CHAT);
    expect(OPERATION.executeTool).toBe(incubating.GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL);
    expect(Object.values(incubating)).not.toContain(OPERATION.applyGuardrail);
    expect(METRIC.tokenUsage).toBe(incubating.METRIC_GEN_AI_CLIENT_TOKEN_USAGE);
    expect(METRIC.operationDuration).toBe(incubating.METRIC_GEN_AI_CLIENT_OPERATION_DURATION);
  });
});

describe("@rein/plugin-otel exports", () => {
  it("exports exactly these runtime values", () => {
    expect(Object.keys(otel).sort()).toEqual([
      "ATTR",
      "METRIC",
      "OPERATION",
      "OtelOptions",
      "REIN",
      "default",
    ]);
  });
});
