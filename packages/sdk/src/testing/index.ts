/**
 * @rein/sdk/testing: test a plugin offline with a real harness and a scripted
 * model. No test-runner imports: use it from vitest, node:test or jest alike.
 */
export type {
  EvaluateToolCallOptions,
  ToolCallEvaluation,
  ToolCallProbe,
} from "../evaluate-tool-call.js";
export {
  createScriptedModel,
  type RecordedRequest,
  type ScriptedModel,
  type ScriptReply,
  type ScriptRequest,
  type ScriptStep,
  type ScriptToolCall,
} from "../scripted-model.js";
export { checkToolCall } from "./check-tool-call.js";
export {
  type EndpointReply,
  type EndpointUsage,
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from "./openai-compatible-server.js";
export {
  createTestHarness,
  type TestHarness,
  type TestHarnessConfig,
  type TestHarnessOptions,
} from "./test-harness.js";
export { type TestToolContext, type ToolContextOptions, toolContext } from "./tool-context.js";
