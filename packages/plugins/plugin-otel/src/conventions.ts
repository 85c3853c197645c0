/**
 * The names Rein's spans and metrics use: the OpenTelemetry GenAI semantic
 * conventions (experimental, as published with `@opentelemetry/semantic-conventions`
 * 1.45.0), plus Rein's own `rein.*` attributes for what the conventions do not
 * name yet (a gate's verdict, who decided, the rule).
 *
 * Invariant: every `gen_ai.*` / `error.type` name here is the published one; a
 * test compares this table with the installed semantic-conventions package, so a
 * renamed convention shows up as a failing test, not as a silently odd trace.
 * (The package itself is a dev dependency only: its incubating entry point is
 * not meant to be depended on at run time.)
 */
export const ATTR = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheWriteTokens: "gen_ai.usage.cache_creation.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolArguments: "gen_ai.tool.call.arguments",
  toolResult: "gen_ai.tool.call.result",
  tokenType: "gen_ai.token.type",
  errorType: "error.type",
} as const;

/** `gen_ai.operation.name` values. `apply_guardrail` is not published yet (see README). */
export const OPERATION = {
  invokeAgent: "invoke_agent",
  chat: "chat",
  executeTool: "execute_tool",
  applyGuardrail: "apply_guardrail",
} as const;

export const METRIC = {
  tokenUsage: "gen_ai.client.token.usage",
  operationDuration: "gen_ai.client.operation.duration",
} as const;

/** The conventions' advised histogram buckets (seconds; tokens). */
export const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
export const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];

/** Rein's own attributes: decisions and runs, which the conventions do not cover. */
export const REIN = {
  runId: "rein.run.id",
  agentPath: "rein.agent.path",
  runStatus: "rein.run.status",
  runReason: "rein.run.reason",
  turnIndex: "rein.turn.index",
  decision: "rein.decision",
  decisionBy: "rein.decision.by",
  decisionRule: "rein.decision.rule",
  decisionReason: "rein.decision.reason",
  decisionAskedBy: "rein.decision.asked_by",
  approvalId: "rein.decision.approval_id",
  /** The agent whose call `rein hook` decided (`claude-code`, `codex`, `gemini`). */
  hookAgent: "rein.hook.agent",
} as const;

/**
 * pi-ai provider ids to the conventions' `gen_ai.provider.name` values; an id
 * not listed is reported as it is (the conventions allow custom values).
 */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  anthropic: "anthropic",
  openai: "openai",
  "openai-codex": "openai",
  "azure-openai-responses": "azure.ai.openai",
  google: "gcp.gemini",
  "google-gemini-cli": "gcp.gemini",
  "google-vertex": "gcp.vertex_ai",
  "amazon-bedrock": "aws.bedrock",
  mistral: "mistral_ai",
  groq: "groq",
  xai: "x_ai",
  deepseek: "deepseek",
  perplexity: "perplexity",
};

export const providerName = (provider: string): string => PROVIDER_NAMES[provider] ?? provider;

/** pi-ai stop reasons to the finish reasons people know from the provider APIs. */
const FINISH_REASONS: Readonly<Record<string, string>> = {
  stop: "stop",
  length: "length",
  toolUse: "tool_calls",
  error: "error",
  aborted: "aborted",
};

export const finishReason = (stopReason: string): string => FINISH_REASONS[stopReason] ?? stopReason;
