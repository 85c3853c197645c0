/**
 * The custom entry type of what an agent's tool returned (PostToolUse), as
 * `rein hook` records it and the transcript shows it. Its own module, so the
 * transcript reads it without loading the hook machinery.
 */
export const RESULT_ENTRY_TYPE = "rein.agent-tool-result";
