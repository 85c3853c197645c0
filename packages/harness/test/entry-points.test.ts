/**
 * The runtime values of @rein/harness, pinned: every addition to (or removal
 * from) the public API is a deliberate change to this list and to the README.
 */
import { describe, expect, it } from "vitest";
import * as harness from "../src/index.js";
import * as sessions from "../src/session/index.js";

describe("entry points", () => {
  it("@rein/harness exports exactly these runtime values", () => {
    expect(Object.keys(harness).sort()).toEqual([
      "AgentHarness",
      "HOOK_NAMES",
      "HarnessError",
      "HarnessErrorCode",
      "JsonlStorage",
      "MemoryStorage",
      "SESSION_FORMAT_VERSION",
      "Session",
      "SessionStore",
      "Stage",
      "THINKING_LEVELS",
      "TOOL_NAME_PATTERN",
      "TOOL_RISKS",
      "Type",
      "agentOf",
      "approvalsOf",
      "callHash",
      "childSessionFiles",
      "createSessionHeader",
      "decideToolCall",
      "describeError",
      "forkEntries",
      "isHarnessError",
      "loadBuiltinProvider",
      "maskConnectionStrings",
      "recoverChildren",
      "reinIdentity",
      "reinIdentityForApi",
      "resolveApproval",
      "runAgentLoop",
      "startChild",
      "textResult",
      "withReinIdentity",
    ]);
  });

  it("@rein/harness/session exports exactly these runtime values (the session layer without pi-ai)", () => {
    expect(Object.keys(sessions).sort()).toEqual([
      "BRANCH_SUMMARY_PREFIX",
      "COMPACTION_SUMMARY_PREFIX",
      "JsonlStorage",
      "MemoryStorage",
      "SESSION_FORMAT_VERSION",
      "Session",
      "SessionStore",
      "THINKING_LEVELS",
      "compactionSummaryMessage",
      "createSessionHeader",
      "entryMessage",
      "forkEntries",
      "isTreeEntry",
    ]);
  });
});
