/**
 * A stdio MCP transport whose server runs in a process group of its own.
 *
 * Invariants: the server runs in a process group of its own, so closing the
 * transport can signal the whole group: stdin is ended first (the polite MCP
 * shutdown), then SIGTERM to the group, then SIGKILL; grandchildren a server
 * started (an `npx` wrapper's node, a helper process) die with it. Every live
 * group is also killed synchronously when Rein's process exits, so a stdio server
 * never outlives Rein (a SIGKILL of Rein itself cannot run handlers: the child
 * then sees its stdin close, which ends well-behaved servers). The last few KB
 * of the server's stderr are kept for error messages.
 *
 * The group is made by a small bash launcher with job control (`set -m`), not by
 * spawning detached: detached is `setsid`, a new session, and with the kernel's
 * scheduler autogroups (on by default) a process in another session is woken
 * later, which doubled every call's round trip (0.4 -> 0.9 ms for an echo). The
 * launcher reports the server's pid (= its group id) on fd 3 before anything else
 * happens, waits for it and exits as it did (re-raising its signal); nothing is
 * ever signalled by the launcher's own pid, whose group is Rein's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import {
  type JSONRPCMessage,
  ReadBuffer,
  serializeMessage,
  type Transport,
} from "@modelcontextprotocol/client";
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

/** Runs "$@" as a job (own process group, same session), reports its pid on fd 3, exits as it did. */
const GROUP_LAUNCHER =
  'set -m; "$@" 3>&- & p=$!; set +m; echo "$p" >&3; exec 3>&-; wait "$p"; s=$?; ' +
  'if [ "$s" -gt 128 ]; then kill -s "$((s - 128))" "$$"; fi; exit "$s"';

/** The program as the kernel will run it: on the child's PATH unless it names a path; throws ENOENT like spawn. */
function programPath(command: string, env: Record<string, string>, cwd: string): string {
  const executable = (path: string) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes("/")) {
    const path = isAbsolute(command) ? command : resolve(cwd, command);
    if (executable(path)) return path;
  } else {
    for (const dir of (env.PATH ?? "").split(delimiter)) {
      if (dir === "") continue;
      const path = resolve(cwd, dir, command);
      if (executable(path)) return path;
    }
  }
  const error = new Error(`spawn ${command} ENOENT`) as NodeJS.ErrnoException;
  error.code = "ENOENT";
  throw error;
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

  /** The server's pid, which is its process group's id. */
  get pid(): number | undefined {
    return this.group;
  }

  private group: number | undefined;

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
    let resolved: string;
    try {
      resolved = programPath(program as string, this.params.env, this.params.cwd);
    } catch (error) {
      await this.unsandbox();
      throw error;
    }
    return new Promise((resolvePromise, reject) => {
      const child = spawn("/bin/bash", ["-c", GROUP_LAUNCHER, "rein-mcp", resolved, ...programArgs], {
        cwd: this.params.cwd,
        env: this.params.env,
        stdio: ["pipe", "pipe", "pipe", "pipe"],
        shell: false,
        windowsHide: true,
      });
      this.child = child;
      let reported = "";
      const report = child.stdio[3] as NodeJS.ReadableStream | null;
      report?.on("data", (chunk: Buffer) => {
        reported += chunk.toString("utf8");
        const line = /^(\d+)\n/.exec(reported);
        if (line === null || this.group !== undefined) return;
        this.group = Number(line[1]);
        liveGroups.add(this.group);
        resolvePromise();
      });
      this.exited = new Promise((done) => {
        child.once("close", (code, signal) => {
          this.exitInfo = { code, signal };
          if (this.group !== undefined) {
            liveGroups.delete(this.group);
            // The server is gone: whatever it started in its group goes with it.
            killGroup(this.group, "SIGKILL");
          } else {
            reject(new Error(`the launcher exited before starting ${program} (${signal ?? `code ${code}`})`));
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
    const pid = this.group;
    const exited = this.exited as Promise<void>;
    const waitExit = (ms: number) =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(r, ms, false).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // ignore
    }
    if (pid === undefined) {
      // Not started yet (the pid was never reported): the launcher alone exists.
      child.kill("SIGKILL");
      return;
    }
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
