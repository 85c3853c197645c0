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
      "DEFAULT_CATALOG_BUDGET",
      "HOOK_NAMES",
      "HarnessError",
      "HarnessErrorCode",
      "JsonlStorage",
      "MemoryStorage",
      "SESSION_FORMAT_VERSION",
      "SKILL_ENTRY",
      "SKILL_NAME_PATTERN",
      "SKILL_TOOL_NAME",
      "Session",
      "SessionStore",
      "Stage",
      "TEMPLATE_ENTRY",
      "TEMPLATE_NAME_PATTERN",
      "THINKING_LEVELS",
      "TOOL_NAME_PATTERN",
      "TOOL_RISKS",
      "Type",
      "agentOf",
      "allowedToolNames",
      "approvalsOf",
      "callHash",
      "childSessionFiles",
      "createSessionHeader",
      "createSkillTool",
      "decideToolCall",
      "describeError",
      "expandArguments",
      "forkEntries",
      "isHarnessError",
      "loadBuiltinProvider",
      "maskConnectionStrings",
      "parseAllowedTools",
      "recoverChildren",
      "reinIdentity",
      "reinIdentityForApi",
      "resolveApproval",
      "runAgentLoop",
      "skillCatalog",
      "splitArguments",
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
