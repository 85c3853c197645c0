/**
 * A sandboxed stdio server gets no more of the machine than its `sandbox` option
 * grants: real server-filesystem, real bubblewrap, real files.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createTestHarness, type TestHarness } from "@rein/sdk/testing";
import { releaseRuntimeIfIdle } from "@rein/tools-shell";
import { afterEach, describe, expect, it } from "vitest";
import mcp, { resolveServer, ServerConnection } from "../src/index.js";
import { filesystemServer, tempDir } from "./helpers.js";

let t: TestHarness | undefined;
afterEach(async () => {
  await t?.dispose();
  t = undefined;
  await releaseRuntimeIfIdle();
});

async function writeThrough(mode: "read-only" | "workspace-write") {
  const root = tempDir();
  const target = join(root, "note.txt");
  t = await createTestHarness({
    plugins: [[mcp, { servers: { fs: { ...filesystemServer(root), sandbox: { mode }, required: true } } }]],
    script: [{ toolCalls: [{ name: "mcp__fs__write_file", args: { path: target, content: "hi" } }] }, "done"],
  });
  await t.prompt("write the note");
  const result = t.messages().find((message) => message.role === "toolResult");
  return { target, result };
}

describe("a stdio server inside the sandbox", () => {
  it("read-only: the server's write tool cannot write even an allowed path", async () => {
    const { target, result } = await writeThrough("read-only");
    expect(result?.isError).toBe(true);
    // The server ran the call and the kernel refused the write (not a validation error).
    expect(JSON.stringify(result?.content)).toMatch(/EROFS|read-only file system/i);
    expect(existsSync(target)).toBe(false);
  });

  it("workspace-write: the server writes inside its directory", async () => {
    const { target, result } = await writeThrough("workspace-write");
    expect(result?.isError).toBe(false);
    expect(readFileSync(target, "utf8")).toBe("hi");
  });

  it("fails closed naming the server when bwrap is missing", async () => {
    const root = tempDir();
    const connection = new ServerConnection(
      resolveServer(
        "boxed",
        { ...filesystemServer(root), sandbox: { bwrapPath: "/nonexistent/bwrap" } },
        { cwd: root },
      ),
      { onTools: () => undefined, log: () => undefined },
      { name: "test", version: "0" },
    );
    const failure = connection.start();
    await expect(failure).rejects.toMatchObject({ code: "start_failed", server: "boxed" });
    await expect(failure).rejects.toThrow(
      /mcp server "boxed".*the sandbox cannot start.*\/nonexistent\/bwrap/,
    );
    await connection.close();
  });
});
