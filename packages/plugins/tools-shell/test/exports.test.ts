import { expect, it } from "vitest";
import * as shellTools from "../src/index.js";

it("exports exactly the documented names", () => {
  expect(Object.keys(shellTools).sort()).toEqual([
    "BASH_DEFAULTS",
    "DEFAULT_DENY_READ",
    "DEFAULT_OUTPUT_FILE_MAX_BYTES",
    "DEFAULT_SANDBOX_MODE",
    "ESCAPE_ARGUMENT",
    "OutputCollector",
    "OutputFiles",
    "SANDBOX_ADVICE",
    "SandboxUnavailable",
    "checkSandbox",
    "createBashTool",
    "default",
    "gateUnsandboxedRuns",
    "openBashTool",
    "releaseRuntimeIfIdle",
    "resolveSandboxPolicy",
    "sandboxArgv",
    "shellToolsOptionsSchema",
  ]);
});
