/** The runtime values of @rein/tools-task, pinned: an addition to its API is deliberate. */
import { describe, expect, it } from "vitest";
import * as pack from "../src/index.js";

describe("entry points", () => {
  it("@rein/tools-task exports exactly these runtime values", () => {
    expect(Object.keys(pack).sort()).toEqual([
      "ChildAgentSpec",
      "DEFAULT_AGENT",
      "TASK_TOOL",
      "TaskErrorCode",
      "TaskOptions",
      "default",
      "looseningRefused",
    ]);
  });
});
