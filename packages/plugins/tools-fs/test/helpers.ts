import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { AnyAgentTool, ToolResult } from "@rein/sdk";
import { afterEach } from "vitest";
import { createFsTools, type FsToolsOptions } from "../src/index.js";

const made: string[] = [];

afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp directory (its real path), removed after the test. */
export function tempDir(prefix = "rein-fs-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Writes files (creating directories) under `dir`. */
export function writeFiles(dir: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}

/** The file tools by name, with the given options. */
export function fsTools(options: FsToolsOptions = {}): Record<string, AnyAgentTool> {
  return Object.fromEntries(createFsTools(options).map((tool) => [tool.name, tool]));
}

/**
 * Calls a tool directly with a fake context whose working directory is `cwd`; like
 * the harness, runs `inspect` first and hands its facts to `execute` (an inspect
 * that throws becomes an error result, as the harness's deny would).
 */
export async function call(
  tool: AnyAgentTool | undefined,
  args: Record<string, unknown>,
  cwd: string,
): Promise<ToolResult> {
  if (!tool) throw new Error("no such tool");
  let facts = {};
  try {
    facts = (await tool.inspect?.(args, { cwd, sessionId: "test-session" })) ?? {};
  } catch (error) {
    return { content: [{ type: "text", text: (error as Error).message }], isError: true };
  }
  return tool.execute(args, {
    signal: new AbortController().signal,
    update: () => undefined,
    cwd,
    sessionId: "test-session",
    toolCallId: "call-1",
    facts,
  });
}

/** The text parts of a result, joined. */
export function textOf(result: ToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}
