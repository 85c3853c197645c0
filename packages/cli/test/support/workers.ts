/** What the worker tests share: a tool that logs its calls, reading that log, waiting. */
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawnRein } from "./rein-process.js";

/** A tool that logs "start"/"end" lines with session, call id, pid and time, taking 120 ms between. */
export const MARK_PLUGIN = `import { definePlugin, defineTool, Type } from "@rein/sdk";
import { appendFileSync } from "node:fs";
import { join } from "node:path";

export default definePlugin({
  name: "marks",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "mark",
      description: "Record a mark",
      parameters: Type.Object({ n: Type.Number() }),
      risk: "write",
      execute: async (args, ctx) => {
        const line = (what) => ctx.sessionId + " " + ctx.toolCallId + " " + process.pid + " " + what + " " + Date.now() + "\\n";
        appendFileSync(join(ctx.cwd, "marks.log"), line("start"));
        await new Promise((resolve) => setTimeout(resolve, 120));
        appendFileSync(join(ctx.cwd, "marks.log"), line("end"));
        return { content: [{ type: "text", text: "marked " + args.n }] };
      },
    }));
  },
});
`;

export interface Mark {
  session: string;
  call: string;
  pid: number;
  what: "start" | "end";
  at: number;
}

export const readMarks = (dir: string): Mark[] =>
  existsSync(join(dir, "marks.log"))
    ? readFileSync(join(dir, "marks.log"), "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [session, call, pid, what, at] = line.split(" ");
          return { session, call, pid: Number(pid), what, at: Number(at) } as Mark;
        })
    : [];

export interface Worker {
  child: ChildProcess;
  stderr: string;
  exit: Promise<number | null>;
}

/** Every worker started: `killWorkers()` after the tests, so a failing test leaves none behind. */
const spawned: Worker[] = [];

/** `rein worker <args>` in `dir`, its stderr collected. */
export function spawnWorker(args: string[], dir: string, env: Record<string, string> = {}): Worker {
  const child = spawnRein(["worker", ...args], dir, env);
  const worker: Worker = {
    child,
    stderr: "",
    exit: new Promise((resolve) => child.on("exit", (code) => resolve(code))),
  };
  child.stderr?.on("data", (chunk) => {
    worker.stderr += chunk;
  });
  child.stdin?.end();
  spawned.push(worker);
  return worker;
}

export function killWorkers(): void {
  for (const { child } of spawned.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

/** What each worker started since the last `killWorkers()` said, its last lines: why a wait timed out. */
function workersSaid(): string {
  return spawned
    .map(({ child, stderr }) => {
      const state =
        child.exitCode !== null || child.signalCode !== null
          ? `exited ${child.exitCode ?? child.signalCode}`
          : "running";
      return `worker ${child.pid} (${state}):\n${stderr.split("\n").slice(-40).join("\n")}`;
    })
    .join("\n");
}

/** Polls `check` until it holds; fails naming `what` after `timeoutMs`, with what the workers said. */
export async function until(
  what: string,
  check: () => boolean,
  timeoutMs: number,
  stepMs = 50,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${workersSaid()}`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}
