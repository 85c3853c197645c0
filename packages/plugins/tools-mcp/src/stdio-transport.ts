/**
 * A stdio MCP transport whose server runs in a process group of its own.
 *
 * Invariants: the child is spawned detached (its own process group), so closing
 * the transport can signal the whole group: stdin is ended first (the polite MCP
 * shutdown), then SIGTERM to the group, then SIGKILL; grandchildren a server
 * started (an `npx` wrapper's node, a helper process) die with it. Every live
 * group is also killed synchronously when Rein's process exits, so a stdio server
 * never outlives Rein (a SIGKILL of Rein itself cannot run handlers: the child
 * then sees its stdin close, which ends well-behaved servers). The last few KB
 * of the server's stderr are kept for error messages.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type SandboxOptions, sandboxArgv } from "@rein/tools-shell";

export interface StdioParams {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** Run inside `@rein/tools-shell`'s sandbox (writable root: `cwd`) unless absent or mode "off". */
  sandbox?: SandboxOptions | undefined;
  /** Names the sandbox's commands (the server name). */
  id?: string;
}

const STDERR_KEEP = 4096;
const GRACE_MS = 1_000;

const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const pid of liveGroups) killGroup(pid, "SIGKILL");
  });
}

export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();
  private stderrTail = "";
  private exited: Promise<void> | undefined;
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  constructor(private readonly params: StdioParams) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The end of what the server wrote to stderr. */
  get stderr(): string {
    return this.stderrTail;
  }

  /** How the process ended, if it has. */
  get exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined {
    return this.exitInfo;
  }

  private sandboxed: { release: () => Promise<void>; tmp: string } | undefined;

  /** The argv to spawn: the server itself, or bwrap around it. Throws when the sandbox cannot start. */
  private async argv(): Promise<string[]> {
    const { command, args, sandbox, cwd } = this.params;
    if (sandbox === undefined || (sandbox.mode ?? "workspace-write") === "off") return [command, ...args];
    const tmp = mkdtempSync(join(tmpdir(), "rein-mcp-"));
    try {
      const wrapped = await sandboxArgv([command, ...args], sandbox, {
        root: cwd,
        privateTmp: tmp,
        id: this.params.id ?? "mcp",
      });
      this.sandboxed = { release: wrapped.release, tmp };
      return wrapped.argv;
    } catch (error) {
      rmSync(tmp, { recursive: true, force: true });
      throw error;
    }
  }

  private async unsandbox(): Promise<void> {
    const held = this.sandboxed;
    this.sandboxed = undefined;
    if (held === undefined) return;
    rmSync(held.tmp, { recursive: true, force: true });
    await held.release();
  }

  async start(): Promise<void> {
    if (this.child) throw new Error("transport already started");
    installExitHook();
    const [program, ...programArgs] = await this.argv();
    return new Promise((resolvePromise, reject) => {
      const child = spawn(program as string, programArgs, {
        cwd: this.params.cwd,
        env: this.params.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((done) => {
        child.once("close", (code, signal) => {
          this.exitInfo = { code, signal };
          if (child.pid !== undefined) {
            liveGroups.delete(child.pid);
            // The server is gone: whatever it started in its group goes with it.
            killGroup(child.pid, "SIGKILL");
          }
          void this.unsandbox().finally(() => {
            done();
            this.onclose?.();
          });
        });
      });
      child.once("error", (error) => {
        void this.unsandbox();
        reject(error);
        this.onerror?.(error);
      });
      child.once("spawn", () => {
        if (child.pid !== undefined) liveGroups.add(child.pid);
        resolvePromise();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-STDERR_KEEP);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.exitInfo) return Promise.reject(new Error("not connected"));
    return new Promise((resolvePromise) => {
      if (stdin.write(serializeMessage(message))) resolvePromise();
      else stdin.once("drain", resolvePromise);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || this.exitInfo) return;
    const pid = child.pid;
    const exited = this.exited as Promise<void>;
    const waitExit = (ms: number) =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(r, ms, false).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // ignore
    }
    if (pid === undefined) return;
    if (await waitExit(GRACE_MS)) {
      // The leader left; make sure nothing it started lingers in its group.
      killGroup(pid, "SIGKILL");
      return;
    }
    killGroup(pid, "SIGTERM");
    if (await waitExit(GRACE_MS)) {
      killGroup(pid, "SIGKILL");
      return;
    }
    killGroup(pid, "SIGKILL");
    await waitExit(GRACE_MS);
  }
}
