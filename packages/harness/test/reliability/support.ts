/**
 * Helpers of the reliability suite: the built harness the child processes import,
 * temp directories, a bounded pool of child processes, and session invariants.
 */
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AssistantMessage,
  type Context,
  createAssistantMessageEventStream,
  type Model,
  type Models,
  type SimpleStreamOptions,
} from "@earendil-works/pi-ai";
import { expect } from "vitest";
import type { StreamFunction } from "../../src/loop/loop-types.js";
import type { Session } from "../../src/session/session.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const packageDir = path.resolve(here, "../..");
const repoRoot = path.resolve(packageDir, "../..");

/**
 * Child processes run the built harness (`dist`). Rebuilds it when a source file is
 * newer than the last build, so `vitest run` alone never tests stale code.
 */
export function ensureBuilt(): void {
  const lock = path.join(packageDir, ".reliability-build.lock");
  // Test files run in parallel: one builds, the others wait for it (a lock directory is atomic).
  for (;;) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) fs.rmSync(lock, { recursive: true, force: true }); // left by a killed run
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
    }
  }
  try {
    const info = path.join(packageDir, "dist/.tsbuildinfo");
    const built = fs.existsSync(info) ? fs.statSync(info).mtimeMs : 0;
    const newest = newestMtime(path.join(packageDir, "src"));
    if (newest <= built && fs.existsSync(path.join(packageDir, "dist/index.js"))) return;
    const tsc = path.join(repoRoot, "node_modules/typescript/bin/tsc");
    const result = spawnSync(process.execPath, [tsc, "-b", path.join(packageDir, "tsconfig.json")], {
      encoding: "utf8",
    });
    if (result.status !== 0)
      throw new Error(`building @rein/harness failed:\n${result.stdout}${result.stderr}`);
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : fs.statSync(full).mtimeMs);
  }
  return newest;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export interface ChildResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node script ...args` to completion (or death). */
export function runNode(script: string, args: string[]): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs `task` over `items` with at most `limit` at a time; results in item order. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Child processes to run at once (REIN_CONCURRENCY overrides): one more than the
 * cores, at most 4 - children are CPU-bound at start-up and wait on fsync later.
 */
export const concurrency = () =>
  Number(process.env.REIN_CONCURRENCY) || Math.min(4, (os.availableParallelism?.() ?? os.cpus().length) + 1);

export const textOf = (message: { content?: unknown } | undefined): string => {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: string; text?: string }) => (block?.type === "text" ? (block.text ?? "") : ""))
    .join("");
};

/**
 * Structural invariants of a session after recovery:
 * - every tool call of a completed assistant message on the branch has exactly one
 *   result, after it, before the next assistant message;
 * - the tree has no forks here, so file order is branch order (parent = previous node);
 * - every run the journal started has exactly one end.
 * Returns problems as sentences (empty: consistent).
 */
export function sessionProblems(session: Session): string[] {
  const problems: string[] = [];
  const branch = session.branch();
  const nodes = session.entries().filter((entry) => entry.type !== "leaf");
  if (branch.length !== nodes.length) problems.push(`branch has ${branch.length} of ${nodes.length} entries`);
  nodes.forEach((entry, i) => {
    const expected = i === 0 ? null : nodes[i - 1]?.id;
    if (entry.parentId !== expected) problems.push(`entry ${entry.id} is out of order`);
  });
  let open: Set<string> | undefined;
  const answered = new Set<string>();
  for (const entry of branch) {
    if (entry.type !== "message") {
      if (open !== undefined && open.size > 0)
        problems.push(`${entry.type} entry ${entry.id} between tool calls and their results`);
      continue;
    }
    const { message } = entry;
    if (message.role === "toolResult") {
      if (answered.has(message.toolCallId)) problems.push(`tool call ${message.toolCallId} has two results`);
      answered.add(message.toolCallId);
      if (!open?.delete(message.toolCallId))
        problems.push(`result ${message.toolCallId} answers no open call`);
      continue;
    }
    if (open !== undefined && open.size > 0)
      problems.push(`tool calls ${[...open].join(", ")} have no result`);
    open = undefined;
    if (message.role === "assistant" && message.stopReason !== "error" && message.stopReason !== "aborted") {
      open = new Set(message.content.flatMap((block) => (block.type === "toolCall" ? [block.id] : [])));
    }
  }
  if (open !== undefined && open.size > 0) problems.push(`tool calls ${[...open].join(", ")} have no result`);
  const runs = new Map<string, { starts: number; ends: number }>();
  for (const record of session.journal()) {
    if (record.event !== "run_start" && record.event !== "run_end") continue;
    const run = runs.get(record.runId) ?? { starts: 0, ends: 0 };
    if (record.event === "run_start") run.starts++;
    else run.ends++;
    runs.set(record.runId, run);
  }
  for (const [runId, { starts, ends }] of runs) {
    if (starts !== 1 || ends !== 1) problems.push(`run ${runId} has ${starts} start(s) and ${ends} end(s)`);
  }
  return problems;
}

export function expectConsistent(session: Session): void {
  expect(sessionProblems(session)).toEqual([]);
}

/**
 * pi-ai's faux provider never builds a payload: this stream asks `onPayload` first, as
 * real providers do, then streams through `models()` (the fixture's collection).
 */
export const withPayload = (models: () => Models): StreamFunction =>
  ((model: Model<never>, context: Context, options?: SimpleStreamOptions) => {
    const out = createAssistantMessageEventStream();
    void (async () => {
      try {
        await options?.onPayload?.({ model: model.id, messages: context.messages.length }, model);
      } catch (error) {
        const message: AssistantMessage = {
          role: "assistant",
          content: [],
          api: model.api,
          provider: model.provider,
          model: model.id,
          usage: {
            input: 0,
            output: 0,
            cacheRead: 0,
            cacheWrite: 0,
            totalTokens: 0,
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
          },
          stopReason: "error",
          errorMessage: error instanceof Error ? error.message : String(error),
          timestamp: Date.now(),
        };
        out.push({ type: "error", reason: "error", error: message });
        out.end(message);
        return;
      }
      for await (const event of models().streamSimple(model, context, options)) out.push(event);
      out.end();
    })();
    return out;
  }) as unknown as StreamFunction;
