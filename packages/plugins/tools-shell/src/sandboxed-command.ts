/**
 * Turns one bash call into the argv that runs it inside the sandbox.
 *
 * Invariant: either the returned argv runs the command under the tool's resolved
 * policy (and `release` must be called when it is done), or this throws and nothing
 * was started - there is no path that returns a plain, unsandboxed argv.
 */
import { lstatSync, rmSync } from "node:fs";
import type { ToolExecutionContext } from "@rein/sdk";
import type { OutputFiles } from "./output-files.js";
import {
  reinStateIn,
  resolveSandboxPolicy,
  type SandboxMode,
  type SandboxOptions,
  symlinkedState,
} from "./sandbox-policy.js";
import { acquireSandbox, loadRuntime, SandboxUnavailable, wrapCommand } from "./sandbox-runtime.js";

/** The tool's boundary: its mode, whether the escape may ask, its options and temp dir. */
export interface Boundary {
  mode: SandboxMode;
  escape: "never" | "ask";
  options: SandboxOptions;
  /** Where the sandbox's private temp dir lives. */
  scratch: OutputFiles;
}

/** Single-quotes a word for bash. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Wraps a program and its arguments (no shell) to run inside the sandbox `options`
 * describe, writable root `root` (in `workspace-write`) and private temp dir
 * `privateTmp`: returns the argv to spawn and the release to call once it exited.
 * Throws `SandboxUnavailable` (also for mode "off": the caller decides to run plain).
 */
export async function sandboxArgv(
  argv: readonly string[],
  options: SandboxOptions,
  where: { root: string; privateTmp: string; id: string },
): Promise<{ argv: string[]; release: () => Promise<void> }> {
  const policy = resolveSandboxPolicy(options, {
    root: where.root,
    cwd: where.root,
    privateTmp: where.privateTmp,
  });
  if (policy === undefined) throw new SandboxUnavailable('sandbox mode is "off"');
  const release = await acquireSandbox(policy, {
    bwrapPath: options.bwrapPath,
    socatPath: options.socatPath,
  });
  try {
    const inner = `export TMPDIR=${shellQuote(where.privateTmp)}; exec ${argv.map(shellQuote).join(" ")}`;
    return { argv: ["/bin/bash", "-c", await wrapCommand(inner, policy, where.id, "/bin/bash")], release };
  } catch (error) {
    await release();
    throw error;
  }
}

/**
 * Removes the git pointer files the command created (absent before it, see
 * `GitBoundary`); returns them. Called once the command and every process it
 * started are gone (the sandbox's PID namespace ends with it), so nothing of the
 * command can write them again.
 */
export function removePlantedPointers(paths: readonly string[]): string[] {
  const planted: string[] = [];
  for (const path of paths) {
    try {
      lstatSync(path);
    } catch {
      continue;
    }
    rmSync(path, { recursive: true, force: true });
    planted.push(path);
  }
  return planted;
}

/**
 * Starts the sandbox runtime for commands run in `cwd` now, probe included, so the
 * first command does not wait for it (importing and starting the runtime costs
 * 0.3-0.7 s). The runtime is the process's and keyed by its network policy, which
 * does not depend on `cwd`: a later command with the same policy finds it started and
 * probed, one with another policy starts its own. A failure is not reported here: the
 * runtime stays unstarted and the first command retries, and fails closed as ever.
 * Once `signal` is aborted (the host is done) nothing more is started.
 */
export async function prepareSandbox(boundary: Boundary, cwd: string, signal?: AbortSignal): Promise<void> {
  if (boundary.mode === "off") return;
  await loadRuntime();
  if (signal?.aborted) return;
  const policy = resolveSandboxPolicy(boundary.options, {
    root: cwd,
    cwd,
    privateTmp: boundary.scratch.directory(),
  });
  if (policy === undefined) return;
  const { bwrapPath, socatPath } = boundary.options;
  const release = await acquireSandbox(policy, { bwrapPath, socatPath });
  await release();
}

export async function sandboxedCommand(
  command: string,
  call: { cwd: string; shell: string; ctx: ToolExecutionContext; boundary: Boundary; outputs: OutputFiles },
): Promise<{ argv: string[]; release: () => Promise<void>; planted: () => string[] }> {
  const { cwd, shell, ctx, boundary, outputs } = call;
  // The writable root is the directory commands run in (the `root` option).
  const policy = resolveSandboxPolicy(boundary.options, {
    root: cwd,
    cwd,
    privateTmp: boundary.scratch.directory(),
    outputs: outputs.path,
  });
  if (policy === undefined) throw new SandboxUnavailable("no sandbox policy");
  const linked = policy.mode === "workspace-write" ? symlinkedState(reinStateIn(cwd)) : undefined;
  if (linked !== undefined) {
    throw new SandboxUnavailable(
      `${linked} is a symbolic link: the sandbox protects where it leads but not the link, which a command could replace, so Rein's own state would be writable. Replace the link with the directory or file itself, or use sandbox mode "read-only"`,
    );
  }
  const { bwrapPath, socatPath } = boundary.options;
  const release = await acquireSandbox(policy, { bwrapPath, socatPath });
  try {
    // TMPDIR: the tool's private dir, not the runtime's shared /tmp/claude. Same line, so
    // the command's own line numbers do not move.
    const inner = `export TMPDIR=${shellQuote(boundary.scratch.directory())}; ${command}`;
    return {
      argv: ["/bin/bash", "-c", await wrapCommand(inner, policy, ctx.toolCallId, shell)],
      release,
      planted: () => removePlantedPointers(policy.absentPointers),
    };
  } catch (error) {
    await release();
    throw error;
  }
}
