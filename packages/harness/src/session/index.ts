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
export {
  type ActiveToolsChangeEntry,
  type AgentMessage,
  type AppliedCompaction,
  type AssistantMessage,
  type BranchSummaryEntry,
  type CompactionEntry,
  type CustomEntry,
  type CustomMessageEntry,
  type DecisionRecord,
  type DecisionStep,
  type EntryInput,
  isTreeEntry,
  type JournalEntry,
  type JournalEvent,
  type JournalQueue,
  type JournalRecord,
  type JournalRunStatus,
  type LabelEntry,
  type LeafEntry,
  type MessageEntry,
  type ModelChangeEntry,
  type RecordedToolResult,
  SESSION_FORMAT_VERSION,
  type SessionContext,
  type SessionEntry,
  type SessionEntryType,
  type SessionHeader,
  type SessionInfoEntry,
  type SessionParent,
  type StoredEntry,
  THINKING_LEVELS,
  type ThinkingLevel,
  type ThinkingLevelChangeEntry,
} from "./entries.js";
export { type JsonlOpenOptions, JsonlStorage } from "./jsonl-storage.js";
export { MemoryStorage } from "./memory-storage.js";
export { Session } from "./session.js";
export {
  type CreateSessionOptions,
  forkEntries,
  SessionStore,
  type SessionSummary,
} from "./session-store.js";
export {
  createSessionHeader,
  type LoadedSession,
  type SessionStorage,
  type StorageResult,
} from "./storage.js";
