import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { afterEach, describe, expect, it } from "vitest";
import fsTools from "../src/index.js";
import { tempDir, writeFiles } from "./helpers.js";

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
});

const toolResults = (harness: TestHarness) =>
  harness.messages().filter((message) => message.role === "toolResult");

describe("@rein/tools-fs as a plugin", () => {
  it("registers the six tools with their risk levels and execution modes", async () => {
    t = await createTestHarness({ plugins: [fsTools] });
    const plugin = t.host.plugins.find((p) => p.name === "@rein/tools-fs");
    expect(plugin?.tools).toEqual(["read", "write", "edit", "ls", "find", "grep"]);
    const tools = Object.fromEntries(t.harness.tools.map((tool) => [tool.name, tool]));
    for (const name of ["read", "ls", "find", "grep"]) expect(tools[name]?.risk, name).toBe("read");
    for (const name of ["write", "edit"]) {
      expect(tools[name]?.risk, name).toBe("write");
      expect(tools[name]?.executionMode, name).toBe("sequential");
    }
  });

  it("runs a scripted read, edit and refused read in the harness's working directory", async () => {
    const root = tempDir();
    writeFiles(root, { "notes.txt": "status: draft\n" });
    t = await createTestHarness({
      plugins: [fsTools],
      config: { cwd: root },
      script: [
        { toolCalls: [{ name: "read", args: { path: "notes.txt" } }] },
        { toolCalls: [{ name: "edit", args: { path: "notes.txt", oldText: "draft", newText: "final" } }] },
        { toolCalls: [{ name: "read", args: { path: "../elsewhere.txt" } }] },
        "done",
      ],
    });
    const outcome = await t.prompt("finalize the notes");
    expect(outcome.status).toBe("completed");
    const [read, edit, refused] = toolResults(t);
    expect(read).toMatchObject({
      toolName: "read",
      isError: false,
      content: [{ type: "text", text: "status: draft" }],
    });
    expect(edit).toMatchObject({ toolName: "edit", isError: false });
    expect((edit?.details as { diff?: string } | undefined)?.diff).toContain(
      "-status: draft\n+status: final",
    );
    expect(refused).toMatchObject({
      toolName: "read",
      isError: true,
      content: [{ type: "text", text: `path "../elsewhere.txt" is outside the root ${root}` }],
    });
    expect(readFileSync(join(root, "notes.txt"), "utf8")).toBe("status: final\n");
  });

  it("takes the root from its options", async () => {
    const root = tempDir();
    writeFiles(root, { "pkg/inner.txt": "inner\n", "outer.txt": "outer\n" });
    t = await createTestHarness({
      plugins: [[fsTools, { root: "pkg", maxLines: 10 }]],
      config: { cwd: root },
      script: [{ toolCalls: [{ name: "ls", args: {} }] }, "done"],
    });
    await t.prompt("list");
    expect(toolResults(t)[0]).toMatchObject({ content: [{ type: "text", text: "inner.txt" }] });
  });

  it("rejects bad options at load time", async () => {
    await expect(createTestHarness({ plugins: [[fsTools, { maxBytes: "lots" }]] })).rejects.toMatchObject({
      code: "invalid_options",
      plugin: "@rein/tools-fs",
      path: "/maxBytes",
    });
  });
});
