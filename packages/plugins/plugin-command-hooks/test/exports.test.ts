import { expect, it } from "vitest";
import * as commandHooks from "../src/index.js";

it("exports exactly the documented names", () => {
  expect(Object.keys(commandHooks).sort()).toEqual([
    "CommandHookError",
    "CommandHookErrorCode",
    "CommandHooksOptions",
    "EVENTS",
    "agentToolName",
    "default",
    "fromAgentInput",
    "hookTable",
    "isCommandHookError",
    "readSettingsFile",
    "toAgentCall",
  ]);
});
