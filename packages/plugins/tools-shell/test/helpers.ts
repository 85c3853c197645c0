import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ToolResult } from "@rein/sdk";
import { afterEach } from "vitest";
import { type BashDetails, type BashToolOptions, openBashTool } from "../src/index.js";

const made: string[] = [];
const handles: { dispose(): void }[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  for (const handle of handles.splice(0)) handle.dispose();
});

/** Removes a file or directory after the test (e.g. a kept full-output file). */
export function removeLater(path: string | undefined): void {
  if (path) made.push(path);
}

export function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "rein-shell-")));
  made.push(dir);
  return dir;
}

export interface Run {
  result: Promise<ToolResult<BashDetails>>;
  updates: ToolResult[];
  controller: AbortController;
}

/** Starts the bash tool directly with a fake context; `updates` collects `ctx.update()` calls. */
export function start(
  command: string,
  cwd: string,
  options: BashToolOptions = {},
  extra: { timeout?: number; controller?: AbortController } = {},
): Run {
  const controller = extra.controller ?? new AbortController();
  const updates: ToolResult[] = [];
  const args = extra.timeout === undefined ? { command } : { command, timeout: extra.timeout };
  const handle = openBashTool(options);
  // Kept files outlive the call (tests read them); the tool's dirs go after the test.
  handles.push(handle);
  const result = Promise.resolve(
    handle.tool.execute(args, {
      signal: controller.signal,
      update: (partial) => updates.push(partial),
      cwd,
      sessionId: "test-session",
      toolCallId: "call-1",
      facts: {},
    }),
  );
  return { result, updates, controller };
}

export const run = (command: string, cwd: string, options: BashToolOptions = {}) =>
  start(command, cwd, options).result;

export const textOf = (result: ToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

/**
 * Whether a process has terminated: gone entirely, or a zombie (exited, waiting to
 * be reaped - an orphan's parent may be an init that does not reap).
 */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  const state = readFileSync(stat, "utf8").split(") ").at(-1)?.[0];
  return state === "Z" || state === "X";
}

/** Polls until `check` passes (for waiting on a child's side effects, not for timing). */
export async function until(check: () => boolean, what: string, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Host pids whose command line contains `marker` (sandboxed processes have other pids inside). */
export function pidsWithMarker(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(marker))
        pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** A loopback HTTP server answering `body`; closed after the test. */
export async function loopbackServer(body: string): Promise<number> {
  const server = createServer((_request, response) => response.end(body));
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
});
