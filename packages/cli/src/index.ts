/** @rein/cli as a library: what the `rein` command builds on, for embedding and tests. */
export { type Agent, type AgentOptions, buildAgent, sessionStore } from "./agent/build-agent.js";
export { CONFIG_FILE_NAMES, findConfig } from "./config/find-config.js";
export { type LoadedConfig, loadConfig } from "./config/load-config.js";
export { cacheDir } from "./config/module-loader.js";
export { keyVariable, type ResolvedModel, resolveModel } from "./config/resolve-model.js";
export { CliError, CliErrorCode, ExitCode } from "./errors.js";
export { followSession, type QueueNotice, sessionChannel } from "./worker/notices.js";
export {
  closeQueue,
  moveLegacyJobs,
  openQueue,
  PROMPT_QUEUE,
  type PromptJob,
  QUEUE_SCHEMA,
  type QueueSettings,
  submitPrompt,
} from "./worker/prompt-queue.js";
