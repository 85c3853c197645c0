/**
 * The runtime values of @rein/sdk and @rein/sdk/testing, pinned: every addition
 * to (or removal from) the public API is a deliberate change to these lists.
 */
import { describe, expect, it } from "vitest";
import * as sdk from "../src/index.js";
import * as testing from "../src/testing/index.js";

describe("entry points", () => {
  it("@rein/sdk exports exactly these runtime values", () => {
    expect(Object.keys(sdk).sort()).toEqual([
      "CONFIG_FILE_NAMES",
      "CONFIG_KEYS",
      "CONFIG_TABLE",
      "CUSTOM_MODEL_APIS",
      "GIT_CODE_ENTRIES",
      "GIT_POINTER_FILES",
      "GIT_WRITABLE_ENTRIES",
      "HarnessError",
      "MAX_NAME_BYTES",
      "MAX_PATH_BYTES",
      "REIN_STATE_NAMES",
      "SKILL_FILE",
      "SdkError",
      "SdkErrorCode",
      "Stage",
      "TOOL_NAME_PATTERN",
      "TOOL_RISKS",
      "Type",
      "allowedEdits",
      "argsHash",
      "canonicalJson",
      "checkSkillFile",
      "childConfigs",
      "cleanupFailures",
      "closestName",
      "closestNames",
      "createScriptedModel",
      "defineConfig",
      "definePlugin",
      "defineTool",
      "discoverSkills",
      "duplicatePlugin",
      "duplicateTool",
      "editDistance",
      "evaluateToolCall",
      "inspectPaths",
      "invalidOptions",
      "invalidPlugin",
      "invalidTool",
      "isAgentToolLike",
      "isHarnessError",
      "isInside",
      "isReinPlugin",
      "isSdkError",
      "isTraceparent",
      "lexicalRelative",
      "loadPlugins",
      "pathFact",
      "pathRoot",
      "plugin",
      "pluginCleanupFailed",
      "pluginDisposed",
      "pluginSetupFailed",
      "protectedFiles",
      "realpathLoose",
      "recoverChildren",
      "reinCacheDir",
      "reinConfigDir",
      "resolvePath",
      "resolvePluginOptions",
      "startChild",
      "stateFolders",
      "stderrSink",
      "textMasks",
      "textResult",
      "toAssistantMessage",
      "traceContext",
      "truncateOutput",
      "unsupported",
      "walkExclusions",
    ]);
  });

  it("@rein/sdk/testing exports exactly these runtime values", () => {
    expect(Object.keys(testing).sort()).toEqual([
      "checkToolCall",
      "createScriptedModel",
      "createTestHarness",
      "startOpenAICompatibleServer",
      "toolContext",
    ]);
  });
});
