/**
 * The public face of the session layer. Lock internals and parsing helpers stay
 * private to it; everything a harness or application needs is re-exported here.
 */
export {
  BRANCH_SUMMARY_PREFIX,
  COMPACTION_SUMMARY_PREFIX,
  compactionSummaryMessage,
  entryMessage,
} from "./context.js";
export * from "./entries.js";
export { type JsonlOpenOptions, JsonlStorage } from "./jsonl-storage.js";
export { MemoryStorage } from "./memory-storage.js";
export { Session } from "./session.js";
export { type CreateSessionOptions, SessionStore, type SessionSummary } from "./session-store.js";
export { createSessionHeader, type LoadedSession, type SessionStorage } from "./storage.js";
