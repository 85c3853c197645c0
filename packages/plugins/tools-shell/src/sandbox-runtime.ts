/**
 * The process-wide sandbox: `@anthropic-ai/sandbox-runtime`'s `SandboxManager` is a
 * singleton (one HTTP/SOCKS proxy and one socat bridge per process), so its network
 * allowlist is the process's. This module owns it.
 *
 * Invariants:
 * - a command runs sandboxed only after the same configuration ran a probe command
 *   successfully in this process; anything that fails (missing bwrap or socat, user
 *   namespaces refused, the proxy not starting) is a `SandboxUnavailable` with what
 *   to install or how to opt out - never a fallback to running unsandboxed;
 * - the network policy changes only while no sandboxed command runs; a command whose
 *   network policy differs from one running concurrently is refused, not run under
 *   the other's allowlist.
 * - no network (an empty allowlist, the default) is bubblewrap's `--unshare-net` with
 *   no proxy at all. The runtime would start its HTTP/SOCKS proxy and two socat relays
 *   inside every sandbox even to allow nothing, which costs ~60 ms a call; so for this
 *   case the runtime runs without a network config and `--unshare-net` is added to its
 *   bwrap command here. A bwrap command without the expected shape is refused.
 */
import { spawn } from "node:child_process";
import type { SandboxManager as Manager } from "@anthropic-ai/sandbox-runtime";
import { type ResolvedBinaries, type RuntimeBinaries, resolveBinaries } from "./sandbox-binaries.js";
import type { ResolvedSandboxPolicy } from "./sandbox-policy.js";

/**
 * The runtime, imported when the first sandbox starts (about 0.3 s on a loaded 2-core
 * machine, 0.0.83), so a host that loads the tool and never runs a sandboxed command
 * does not pay for it. Set before `active` is; every other use runs after a start.
 */
let SandboxManager: typeof Manager;

export class SandboxUnavailable extends Error {
  readonly code = "sandbox_unavailable";
}

export const SANDBOX_ADVICE =
  "Install bubblewrap and socat (Debian/Ubuntu: apt-get install bubblewrap socat ripgrep; Fedora: dnf install bubblewrap socat ripgrep), " +
  'or opt out with the @rein/tools-shell option sandbox: { mode: "off" } (commands then run unsandboxed).';

interface Active {
  key: string;
  running: number;
}

let active: Active | undefined;
let queue: Promise<unknown> = Promise.resolve();

/** Runs `task` after every earlier acquire/release finished (they touch the singleton). */
function serially<T>(task: () => Promise<T>): Promise<T> {
  const next = queue.then(task, task);
  queue = next.catch(() => undefined);
  return next;
}

function unavailable(reason: string): SandboxUnavailable {
  return new SandboxUnavailable(`the sandbox cannot start: ${reason}. ${SANDBOX_ADVICE}`);
}

/** No host is allowed: the sandbox gets no network namespace access at all, and no proxy. */
const offline = (policy: ResolvedSandboxPolicy) => policy.allowedDomains.length === 0;

const networkKey = (policy: ResolvedSandboxPolicy, binaries: ResolvedBinaries) =>
  JSON.stringify([
    offline(policy) ? "offline" : [policy.allowedDomains, policy.deniedDomains],
    binaries.bwrapPath,
    binaries.socatPath,
  ]);

/** Runs `command` (already wrapped) with bash and returns its exit code and output. */
function runProbe(wrapped: string, cwd: string): Promise<{ code: number | null; output: string }> {
  return new Promise((settle) => {
    const child = spawn("/bin/bash", ["-c", wrapped], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.once("error", (error) => settle({ code: null, output: error.message }));
    child.once("close", (code) => settle({ code, output }));
  });
}

/** Wraps and runs the probe, `true` under `policy`'s network and no file rules; never rejects. */
function runProbeFor(policy: ResolvedSandboxPolicy): Promise<{ code: number | null; output: string }> {
  return wrapCommand(
    "true",
    { ...policy, denyRead: [], allowRead: [], allowWrite: [], denyWrite: [] },
    "probe",
    "bash",
  ).then(
    (wrapped) => runProbe(wrapped, "/"),
    (error: Error) => ({ code: null, output: error.message }),
  );
}

/** Whether the runtime's import has finished (nothing can have started before). */
export function runtimeLoaded(): boolean {
  return SandboxManager !== undefined;
}

/**
 * The runtime's manager module, not its package index: the index also builds the
 * configuration's zod schemas (zod and 11 modules, ~15% of the import's CPU), which
 * `SandboxManager` never uses. The version is pinned exactly, so the path is the one
 * tested; a runtime without it fails to load, and the sandbox then does not start.
 */
export const RUNTIME_MODULE = "@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-manager.js";

/** Imports the runtime (the larger part of a start); starts nothing. */
export async function loadRuntime(): Promise<void> {
  SandboxManager ??= ((await import(RUNTIME_MODULE)) as { SandboxManager: typeof Manager }).SandboxManager;
}

async function start(policy: ResolvedSandboxPolicy, binaries: ResolvedBinaries, key: string): Promise<void> {
  try {
    await loadRuntime();
  } catch (error) {
    throw unavailable(`@anthropic-ai/sandbox-runtime does not load: ${(error as Error).message}`);
  }
  // The runtime's initialize checks its dependencies itself (ripgrep, and bwrap and socat
  // at the paths given here, resolved by `resolveBinaries`); a second, synchronous
  // check before it spawned `which` three more times on the first command's path.
  // The runtime adds SIGINT/SIGTERM listeners for its cleanup, which would stop a host
  // without its own handler from exiting on SIGTERM; the host's signal handling stays
  // the host's (the runtime's 'exit' cleanup and the plugin's dispose remain).
  const signals = ["SIGINT", "SIGTERM"] as const;
  const before = new Map(signals.map((signal) => [signal, process.listeners(signal)]));
  let probe: Promise<{ code: number | null; output: string }> | undefined;
  try {
    const initialized = SandboxManager.initialize({
      network: offline(policy)
        ? // No allowedDomains: the runtime starts no proxy (withoutNetwork isolates instead).
          ({ deniedDomains: [] } as unknown as { allowedDomains: string[]; deniedDomains: string[] })
        : { allowedDomains: policy.allowedDomains, deniedDomains: policy.deniedDomains },
      filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
      ...(binaries.bwrapPath !== undefined ? { bwrapPath: binaries.bwrapPath } : {}),
      ...(binaries.socatPath !== undefined ? { socatPath: binaries.socatPath } : {}),
    });
    // Offline, the probe runs beside the rest of initialize (its dependency checks and the
    // socat bridge, which waits up to 100 ms for its socket), not after it: a wrap reads
    // only the configuration initialize installs before its first await, and an offline
    // wrap uses no proxy. Its outcome counts only once initialize has succeeded. With a
    // network (the wrap would read proxy ports not yet started), or a configuration not
    // yet installed here (another runtime version), the probe runs after initialize.
    if (offline(policy) && SandboxManager.getConfig() !== undefined) probe = runProbeFor(policy);
    await initialized;
  } catch (error) {
    if (probe !== undefined) {
      await probe;
      SandboxManager.cleanupAfterCommand();
    }
    await SandboxManager.reset().catch(() => undefined);
    throw unavailable((error as Error).message);
  } finally {
    for (const signal of signals) {
      const kept = before.get(signal) ?? [];
      for (const listener of process.listeners(signal)) {
        if (!kept.includes(listener)) process.removeListener(signal, listener);
      }
    }
  }
  // One real sandboxed command: user namespaces can be refused only at run time.
  const outcome = await (probe ?? runProbeFor(policy));
  SandboxManager.cleanupAfterCommand();
  if (outcome.code !== 0) {
    await SandboxManager.reset().catch(() => undefined);
    const why = outcome.output.trim().split("\n").slice(-3).join(" ") || `exit code ${outcome.code}`;
    throw unavailable(`a trivial sandboxed command failed (${why}); user namespaces may be disabled`);
  }
  active = { key, running: 0 };
}

/**
 * Makes the runtime ready for `policy` and counts one running command; call the
 * returned release when the command is done. Throws `SandboxUnavailable`.
 */
export function acquireSandbox(
  policy: ResolvedSandboxPolicy,
  binaries: RuntimeBinaries,
): Promise<() => Promise<void>> {
  return serially(async () => {
    if (process.platform !== "linux" && process.platform !== "darwin") {
      throw unavailable(`platform ${process.platform} is not supported (Linux with bubblewrap, or macOS)`);
    }
    const resolved = resolveBinaries(binaries);
    if ("problems" in resolved) throw unavailable(resolved.problems.join(", "));
    const key = networkKey(policy, resolved);
    if (active?.key !== key) {
      if (active !== undefined && active.running > 0) {
        throw new SandboxUnavailable(
          "another sandboxed command with a different network policy is running in this process; " +
            "the sandbox's network proxy serves one policy per process, so this command was not run. Retry when it is done",
        );
      }
      if (active !== undefined) {
        active = undefined;
        await SandboxManager.reset();
      }
      await start(policy, resolved, key);
    }
    const holder = active as Active;
    holder.running++;
    let released = false;
    return () =>
      serially(async () => {
        if (released) return;
        released = true;
        holder.running--;
        // Removes the empty mount points bwrap made for absent deny paths.
        SandboxManager.cleanupAfterCommand();
      });
  });
}

/** Wraps one command for the runtime: a shell string to run with `/bin/bash -c`. */
export async function wrapCommand(
  command: string,
  policy: ResolvedSandboxPolicy,
  commandId: string,
  shell: string,
): Promise<string> {
  if (SandboxManager === undefined) throw unavailable("the sandbox was not started (acquireSandbox first)");
  const wrapped = await SandboxManager.wrapWithSandbox(
    command,
    shell,
    {
      filesystem: {
        denyRead: policy.denyRead,
        allowRead: policy.allowRead,
        allowWrite: policy.allowWrite,
        denyWrite: policy.denyWrite,
      },
    },
    undefined,
    { commandId },
  );
  return offline(policy) ? withoutNetwork(wrapped) : wrapped;
}

const BWRAP_HEAD = " --new-session --die-with-parent ";

/** Adds `--unshare-net` to the runtime's bwrap command (see the module comment). */
export function withoutNetwork(wrapped: string): string {
  const at = wrapped.indexOf(BWRAP_HEAD);
  const program = wrapped.slice(0, Math.max(0, at));
  if (at <= 0 || !/^'?[^\s']*bwrap'?$/.test(program) || wrapped.includes(" --unshare-net ")) {
    throw new SandboxUnavailable(
      `the sandbox runtime's bwrap command has an unexpected shape, so network isolation cannot be added: ${wrapped.slice(0, 120)}`,
    );
  }
  return `${program}${BWRAP_HEAD}--unshare-net ${wrapped.slice(at + BWRAP_HEAD.length)}`;
}

/** Stops the proxies when nothing runs (tests; plugin dispose of the last user). */
export function releaseRuntimeIfIdle(): Promise<void> {
  return serially(async () => {
    if (active === undefined || active.running > 0) return;
    active = undefined;
    await SandboxManager.reset();
  });
}
