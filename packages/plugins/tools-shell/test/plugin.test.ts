import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import shellTools from "../src/index.js";
import { tempDir } from "./helpers.js";

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

describe("@rein/tools-shell as a plugin", () => {
  it("registers bash with risk exec", async () => {
    t = await createTestHarness({ plugins: [shellTools] });
    expect(t.host.plugins.find((p) => p.name === "@rein/tools-shell")?.tools).toEqual(["bash"]);
    expect(t.harness.tools.find((tool) => tool.name === "bash")?.risk).toBe("exec");
  });

  it("runs a scripted command in the harness's working directory, streaming updates and reporting the exit code", async () => {
    const cwd = tempDir();
    t = await createTestHarness({
      plugins: [[shellTools, { updateIntervalMs: 20 }]],
      config: { cwd },
      script: [
        { toolCalls: [{ name: "bash", args: { command: "echo one; sleep 0.3; pwd; exit 4" } }] },
        "the command failed",
      ],
    });
    const outcome = await t.prompt("run it");
    expect(outcome.status).toBe("completed");
    const result = t.messages().find((message) => message.role === "toolResult");
    expect(result).toMatchObject({
      toolName: "bash",
      isError: true,
      content: [{ type: "text", text: `one\n${cwd}\n\n[exit code 4]` }],
      details: { exitCode: 4, cwd },
    });
    const updates = t.eventsOf("tool_execution_update");
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(updates[0]).toMatchObject({
      toolName: "bash",
      partial: { content: [{ type: "text", text: "one" }] },
    });
    // The model saw the result in its next request.
    expect(JSON.stringify(t.requests[1]?.context.messages.at(-1))).toContain("[exit code 4]");
  });

  it("rejects bad options at load time", async () => {
    await expect(createTestHarness({ plugins: [[shellTools, { timeout: -1 }]] })).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "@rein/tools-shell",
      path: "/timeout",
    });
    await expect(
      createTestHarness({ plugins: [[shellTools, { sandbox: { mode: "container" } }]] }),
    ).rejects.toMatchObject({ code: "invalid_options", plugin: "@rein/tools-shell", path: "/sandbox/mode" });
    await expect(
      createTestHarness({
        plugins: [[shellTools, { outputFile: { mask: [{ name: "bad", pattern: "(" }] } }]],
      }),
    ).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "@rein/tools-shell",
      path: "/outputFile/mask/0/pattern",
    });
  });
});
