/**
 * The `bash` tool: runs one command with `bash -c` in the working directory.
 *
 * Invariants:
 * - A call whose signal is already aborted never spawns anything.
 * - The command runs in its own process group (`detached: true`); abort and timeout
 *   signal the whole group (SIGTERM, then SIGKILL after a grace period), so children
 *   and grandchildren go too, even ones that ignore SIGTERM.
 * - The result waits for the output pipes to close, so nothing printed is lost; it
 *   never waits forever on a background process that keeps them open.
 * - Memory is bounded (see OutputCollector); a cut output is kept whole in a private
 *   temp file (see OutputFiles).
 * - With the sandbox on, the command runs under bubblewrap (sandbox-runtime) in its own
 *   PID namespace: when bwrap dies (abort, timeout), the kernel kills every process of
 *   the namespace, including ones that left the process group (`setsid`, `nohup`). A
 *   sandbox that cannot start is an error result; it never falls back to running
 *   unsandboxed. Only `dangerouslyDisableSandbox` with the escape gate runs outside.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { defineTool, type ToolExecutionContext, type ToolResult, Type } from "@rein/sdk";
import { ESCAPE_ARGUMENT, type SandboxFacts } from "./escape.js";
import { OutputCollector, type TruncationLimits } from "./output.js";
import { type OutputFileOptions, OutputFiles } from "./output-files.js";
import { DEFAULT_SANDBOX_MODE, type SandboxMode, type SandboxOptions } from "./sandbox-policy.js";
import { SandboxUnavailable } from "./sandbox-runtime.js";
import { type Boundary, prepareSandbox, sandboxedCommand } from "./sandboxed-command.js";

export interface BashToolOptions {
  /** Directory commands run in, relative to the working directory. Default: the working directory. */
  root?: string;
  /** Default timeout in seconds (a call may set its own). Default 120. */
  timeout?: number;
  /** The shell run as `<shell> -c <command>`. Default "/bin/bash". */
  shell?: string;
  /** Extra environment variables (on top of the host's environment). */
  env?: Record<string, string>;
  /** Lines kept from the start of a long output. Default 100. */
  headLines?: number;
  /** Lines kept from the end of a long output. Default 400. */
  tailLines?: number;
  /** Most bytes of output shown (head and tail together). Default 51200 (50 KiB). */
  maxBytes?: number;
  /** Least time between two live output updates, in ms. Default 100. */
  updateIntervalMs?: number;
  /** Time between SIGTERM and SIGKILL when stopping a command, in ms. Default 2000. */
  killGraceMs?: number;
  /** The OS sandbox (bubblewrap via sandbox-runtime). Default `{ mode: "workspace-write" }`. */
  sandbox?: SandboxOptions;
  /**
   * Whether a call may ask to run unsandboxed (`dangerouslyDisableSandbox`): `"never"`
   * (default for a bare tool) or `"ask"` - only with a gate that asks a person, as the
   * plugin installs.
   */
  unsandboxedEscape?: "never" | "ask";
  /** The full-output file: size cap and mask. */
  outputFile?: OutputFileOptions;
}

export const BASH_DEFAULTS = {
  timeout: 120,
  shell: "/bin/bash",
  headLines: 100,
  tailLines: 400,
  maxBytes: 50 * 1024,
  updateIntervalMs: 100,
  killGraceMs: 2000,
} as const;

/** After the shell exits, how long to wait for its output pipes to close (a background job may hold them). */
const PIPE_CLOSE_WAIT_MS = 250;

export interface BashDetails {
  command: string;
  /** Where the command ran. */
  cwd: string;
  /** The exit code, or null when the command was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the shell, if any. */
  signal?: string;
  timedOut: boolean;
  aborted: boolean;
  /** Whether the output shown was cut (head and tail kept). */
  truncated: boolean;
  /** The full output, when it was cut. */
  fullOutputPath?: string;
  totalLines: number;
  totalBytes: number;
  /** The boundary the command ran in: the configured mode, and whether this call ran outside it. */
  sandbox: { mode: SandboxMode; unsandboxed: boolean };
}

/** What a live update carries in `details`. */
export interface BashUpdateDetails {
  partial: true;
  totalLines: number;
  totalBytes: number;
}

const parameters = Type.Object({
  command: Type.String({ description: "The bash command line to run." }),
  timeout: Type.Optional(
    Type.Number({ exclusiveMinimum: 0, description: "Timeout in seconds for this command." }),
  ),
  [ESCAPE_ARGUMENT]: Type.Optional(
    Type.Boolean({
      description:
        "Run this one command outside the sandbox. Only when the sandbox blocks something the task really needs; a person must approve it.",
    }),
  ),
});

type BashArgs = { command: string; timeout?: number; [ESCAPE_ARGUMENT]?: boolean };

/** A bash tool with the resources it holds (the private temp dirs). */
export interface BashToolHandle {
  tool: ReturnType<typeof createBashTool>;
  /** Removes the kept full-output files and the sandbox's private temp dir. */
  dispose(): void;
  /**
   * Starts the OS sandbox for commands in `cwd` ahead of the first one (`prepareSandbox`);
   * resolves when it is ready or could not start (the first command then says why).
   */
  prepare(cwd: string, signal?: AbortSignal): Promise<void>;
}

/** Signals a process group; false when it no longer exists. */
function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

interface RunOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stopped?: "timeout" | "abort";
  spawnError?: Error;
}

/** A bash tool (see `openBashTool` for one whose temp files a host removes). */
export function createBashTool(options: BashToolOptions = {}) {
  return buildBashTool(options, new OutputFiles(options.outputFile), new OutputFiles());
}

/** A bash tool and its disposer, for hosts that remove its temp files when the session is done. */
export function openBashTool(options: BashToolOptions = {}): BashToolHandle {
  const outputs = new OutputFiles(options.outputFile);
  const scratch = new OutputFiles();
  return {
    tool: buildBashTool(options, outputs, scratch),
    dispose() {
      outputs.dispose();
      scratch.dispose();
    },
    prepare: (cwd, signal) =>
      prepareSandbox(boundaryOf(options, scratch), resolve(cwd, options.root ?? "."), signal).catch(
        () => undefined,
      ),
  };
}

function buildBashTool(options: BashToolOptions, outputs: OutputFiles, scratch: OutputFiles) {
  const settings = { ...BASH_DEFAULTS, ...stripUndefined(options) };
  const limits: TruncationLimits = {
    headLines: settings.headLines,
    tailLines: settings.tailLines,
    maxBytes: settings.maxBytes,
  };
  const boundary = boundaryOf(options, scratch);
  const { mode } = boundary;
  return defineTool<typeof parameters, BashDetails>({
    name: "bash",
    label: "Run shell command",
    description: [
      "Run a bash command in the working directory (as `bash -c`) and get its combined stdout and stderr",
      "and exit code; a non-zero exit is reported as an error.",
      `Commands time out after ${settings.timeout} s unless you set timeout (seconds); there is no stdin,`,
      "so avoid interactive commands (pagers, editors, prompts).",
      `Long output is cut to the first ${settings.headLines} and last ${settings.tailLines} lines`,
      "and the full output is saved to a file whose path is given, to read with head, tail, grep or sed.",
      "Prefer the file tools (read, edit, find, grep) for files when they are available.",
    ].join(" "),
    parameters,
    risk: "exec",
    // The parsed command every gate decides on (security invariant 1; the parser loads on
    // first use) and the OS boundary the call runs in.
    inspect: async (args) => ({
      command: await (await import("@rein/sdk/shell")).analyzeShell(args.command),
      sandbox: {
        mode,
        unsandboxedRequested: mode !== "off" && args[ESCAPE_ARGUMENT] === true,
      } as SandboxFacts,
    }),
    execute: (args, ctx) => runBash(args, ctx, settings, limits, boundary, outputs),
  });
}

function boundaryOf(options: BashToolOptions, scratch: OutputFiles): Boundary {
  const mode: SandboxMode = options.sandbox?.mode ?? DEFAULT_SANDBOX_MODE;
  return { mode, escape: options.unsandboxedEscape ?? "never", options: options.sandbox ?? {}, scratch };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

type Settings = {
  [K in keyof typeof BASH_DEFAULTS]: (typeof BASH_DEFAULTS)[K] extends string ? string : number;
} & Pick<BashToolOptions, "root" | "env">;

async function runBash(
  args: BashArgs,
  ctx: ToolExecutionContext,
  settings: Settings,
  limits: TruncationLimits,
  boundary: Boundary,
  outputs: OutputFiles,
): Promise<ToolResult<BashDetails>> {
  const fail = (text: string): ToolResult<BashDetails> => ({
    content: [{ type: "text", text }],
    isError: true,
  });
  if (ctx.signal.aborted) return fail("aborted before start; the command was not run");
  const cwd = resolve(ctx.cwd, settings.root ?? ".");
  try {
    if (!statSync(cwd).isDirectory()) return fail(`working directory ${cwd} is not a directory`);
  } catch {
    return fail(`working directory ${cwd} does not exist`);
  }
  const timeoutSeconds = args.timeout ?? settings.timeout;
  const unsandboxed = boundary.mode === "off" || args[ESCAPE_ARGUMENT] === true;
  if (boundary.mode !== "off" && args[ESCAPE_ARGUMENT] === true && boundary.escape !== "ask") {
    return fail(
      `${ESCAPE_ARGUMENT} is refused: this bash tool has no gate that asks a person (use the @rein/tools-shell plugin); the command was not run`,
    );
  }
  let argv: string[] = [settings.shell, "-c", args.command];
  let release: (() => Promise<void>) | undefined;
  let planted: (() => string[]) | undefined;
  if (!unsandboxed) {
    try {
      ({ argv, release, planted } = await sandboxedCommand(args.command, {
        cwd,
        shell: settings.shell,
        ctx,
        boundary,
        outputs,
      }));
    } catch (error) {
      const message =
        error instanceof SandboxUnavailable
          ? error.message
          : `the sandbox failed: ${(error as Error).message}`;
      return fail(`${message}\nThe command was not run.`);
    }
    if (ctx.signal.aborted) {
      await release?.();
      return fail("aborted before start; the command was not run");
    }
  }
  const output = new OutputCollector(limits, undefined, outputs);

  let child: ChildProcess;
  try {
    child = spawn(argv[0] as string, argv.slice(1), {
      cwd,
      detached: true, // its own process group, so abort can kill the whole tree
      stdio: ["ignore", "pipe", "pipe"],
      env: settings.env ? { ...process.env, ...settings.env } : process.env,
    });
  } catch (error) {
    await release?.();
    return fail(`could not start ${settings.shell}: ${(error as Error).message}`);
  }

  // Live output, at most once per interval, with a trailing update for the last burst.
  let lastUpdate = 0;
  let pendingUpdate: NodeJS.Timeout | undefined;
  let finished = false;
  const sendUpdate = () => {
    pendingUpdate = undefined;
    if (finished) return;
    lastUpdate = Date.now();
    const details: BashUpdateDetails = {
      partial: true,
      totalLines: output.totalLines,
      totalBytes: output.totalBytes,
    };
    ctx.update({ content: [{ type: "text", text: output.recent() }], details });
  };
  const onData = (chunk: Buffer) => {
    output.push(chunk);
    if (pendingUpdate === undefined) {
      pendingUpdate = setTimeout(
        sendUpdate,
        Math.max(0, lastUpdate + settings.updateIntervalMs - Date.now()),
      );
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);

  const outcome = await new Promise<RunOutcome>((settle) => {
    let stopped: RunOutcome["stopped"];
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let closeTimer: NodeJS.Timeout | undefined;
    let killed = false;
    let done = false;

    const finish = (result: RunOutcome) => {
      if (done) return;
      done = true;
      clearTimeout(timeoutTimer);
      clearTimeout(closeTimer);
      ctx.signal.removeEventListener("abort", onAbort);
      // A pending killTimer is left running: a process of the group that ignored
      // SIGTERM but let go of the pipes still gets its SIGKILL.
      settle(result);
    };
    const settleFromExit = () => {
      if (exit === undefined) return;
      const result: RunOutcome = { exitCode: exit.code, signal: exit.signal };
      if (stopped !== undefined) result.stopped = stopped;
      finish(result);
    };
    const waitForPipes = () => {
      clearTimeout(closeTimer);
      closeTimer = setTimeout(() => {
        // A background process still holds the pipes: stop reading and report.
        child.stdout?.destroy();
        child.stderr?.destroy();
        settleFromExit();
      }, PIPE_CLOSE_WAIT_MS);
    };
    const stop = (reason: "timeout" | "abort") => {
      if (stopped !== undefined || done) return;
      stopped = reason;
      const pid = child.pid;
      if (pid === undefined) return;
      signalGroup(pid, "SIGTERM");
      setTimeout(() => {
        killed = true;
        signalGroup(pid, "SIGKILL");
        if (exit !== undefined) waitForPipes();
      }, settings.killGraceMs);
    };
    const onAbort = () => stop("abort");
    const timeoutTimer = setTimeout(() => stop("timeout"), timeoutSeconds * 1000);

    child.once("error", (error) => finish({ exitCode: null, signal: null, spawnError: error }));
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      // While stopping, wait for the SIGKILL before giving up on the pipes.
      if (stopped === undefined || killed) waitForPipes();
    });
    child.once("close", (code, signal) => {
      exit ??= { code, signal };
      settleFromExit();
    });
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    if (ctx.signal.aborted) onAbort();
  });

  finished = true;
  clearTimeout(pendingUpdate);
  await release?.();
  const removed = planted?.() ?? [];
  if (outcome.spawnError) {
    output.dispose();
    return fail(`could not run the command: ${outcome.spawnError.message}`);
  }
  const collected = output.finish();
  const details: BashDetails = {
    command: args.command,
    cwd,
    exitCode: outcome.stopped ? null : outcome.exitCode,
    timedOut: outcome.stopped === "timeout",
    aborted: outcome.stopped === "abort",
    truncated: collected.truncated,
    totalLines: collected.totalLines,
    totalBytes: collected.totalBytes,
    sandbox: { mode: boundary.mode, unsandboxed: boundary.mode !== "off" && unsandboxed },
  };
  if (outcome.signal) details.signal = outcome.signal;
  if (collected.fullOutputPath) details.fullOutputPath = collected.fullOutputPath;

  // Sandboxed, the PID namespace goes with bwrap: also processes that left the group.
  const killed = unsandboxed
    ? "the command and its child processes were killed"
    : "the command and every process it started were killed (sandbox process namespace)";
  let status: string;
  let isError: boolean;
  if (outcome.stopped === "timeout") {
    status = `[timed out after ${timeoutSeconds} s; ${killed}]`;
    isError = true;
  } else if (outcome.stopped === "abort") {
    status = `[aborted; ${killed}]`;
    isError = true;
  } else if (outcome.exitCode === null) {
    status = `[killed by signal ${outcome.signal ?? "unknown"}]`;
    isError = true;
  } else {
    status = `[exit code ${outcome.exitCode}]`;
    isError = outcome.exitCode !== 0;
  }
  if (removed.length > 0) {
    status += `\n[Rein removed ${removed.join(", ")}: the command created it, and git would read it later as a pointer to other config and code]`;
    isError = true;
  }
  const body = collected.text === "" ? "(no output)" : collected.text;
  return {
    content: [{ type: "text", text: `${body}\n\n${status}` }],
    details,
    isError,
  };
}
