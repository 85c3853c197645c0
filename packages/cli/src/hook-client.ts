/**
 * The command `rein hook install` writes (`bin/rein-hook.js hook <agent>`): a
 * client of Node built-ins only. It reads the event from stdin, asks this
 * user's warm hook daemon for the same process state (hook/daemon-protocol.ts)
 * over its Unix socket, and prints the answer. When there is no such daemon, or
 * it refuses (a file it loaded changed, a wrong token), or anything at all goes
 * wrong on the way, it decides in process with the full `rein` (today's path,
 * the very same code, with the stdin it read) and starts a daemon for the next
 * event.
 *
 * Invariant: never fails open. The daemon's answer is used only when it is a
 * complete, well-formed answer from a private socket; every other outcome is
 * the in-process path, which fails closed itself.
 */
import {
  answerOf,
  CLIENT_MAX_INPUT_BYTES,
  type DaemonPaths,
  type DaemonRequest,
  daemonEnabled,
  daemonPaths,
  fingerprint,
  isPrivate,
  PROTOCOL,
  privateDir,
  processState,
} from "./hook/daemon-protocol.js";

// Built-ins as daemon-protocol.ts loads them (no ES module wrapper per built-in).
const { closeSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeSync } =
  process.getBuiltinModule("node:fs");
const { connect } = process.getBuiltinModule("node:net");

type ReadInput = { bytes: Buffer } | { timedOut: true } | { failed: string };

/** A start marker older than this is a daemon that never came up: another may start. */
const STARTING_STALE_MS = 60_000;
/** How long past the decision timeout the client waits for the daemon before deciding itself. */
const REPLY_GRACE_MS = 2_000;

/** `--timeout <ms>` as `rein hook` reads it; undefined when absent, NaN when not a positive integer. */
function timeoutOption(argv: readonly string[]): number | undefined {
  let value: string | undefined;
  for (const [index, word] of argv.entries()) {
    if (word === "--") break;
    if (word === "--timeout") value = argv[index + 1];
    else if (word.startsWith("--timeout=")) value = word.slice("--timeout=".length);
  }
  if (value === undefined) return undefined;
  const ms = Number(value);
  return Number.isInteger(ms) && ms > 0 ? ms : Number.NaN;
}

function readInput(timeoutMs: number): Promise<ReadInput> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (read: ReadInput) => {
      clearTimeout(timer);
      stdin.removeAllListeners("data");
      resolve(read);
    };
    const timer = setTimeout(() => {
      stdin.destroy();
      done({ timedOut: true });
    }, timeoutMs);
    stdin.on("data", (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size > CLIENT_MAX_INPUT_BYTES) {
        stdin.destroy();
        done({ bytes: Buffer.concat(chunks) });
      }
    });
    stdin.on("end", () => done({ bytes: Buffer.concat(chunks) }));
    stdin.on("error", (error) => done({ failed: error.message }));
  });
}

/** The event's `cwd` field (where the config is found from), "" when absent; undefined when not JSON. */
function eventCwd(bytes: Buffer): string | undefined {
  try {
    const value = JSON.parse(bytes.toString("utf8")) as { cwd?: unknown };
    if (typeof value !== "object" || value === null) return undefined;
    return typeof value.cwd === "string" ? value.cwd : "";
  } catch {
    return undefined;
  }
}

type Answer = { exitCode: number; stdout: string; stderr: string };

function askDaemon(paths: DaemonPaths, request: DaemonRequest, waitMs: number): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (answer: Answer | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const socket = connect(paths.socket);
    const timer = setTimeout(() => settle(undefined), waitMs);
    const chunks: Buffer[] = [];
    socket.on("connect", () => socket.end(`${JSON.stringify(request)}\n`));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", () => settle(undefined));
    socket.on("close", () => {
      try {
        settle(answerOf(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      } catch {
        settle(undefined);
      }
    });
  });
}

/** Starts a detached daemon for this process state, unless one is already starting. Never throws. */
async function startDaemon(
  paths: DaemonPaths,
  print: string,
  cwdOfEvent: string,
  script: string,
): Promise<void> {
  try {
    let marker: number;
    try {
      marker = openSync(paths.starting, "wx", 0o600);
    } catch {
      const age = Date.now() - (statSync(paths.starting, { throwIfNoEntry: false })?.mtimeMs ?? 0);
      if (age < STARTING_STALE_MS) return;
      unlinkSync(paths.starting);
      marker = openSync(paths.starting, "wx", 0o600);
    }
    writeSync(marker, String(process.pid));
    closeSync(marker);
    const { fileURLToPath } = process.getBuiltinModule("node:url");
    const entry = fileURLToPath(new URL("./hook/daemon-entry.js", import.meta.url));
    // Loaded only here: the warm path does not pay for it.
    const { spawn } = await import("node:child_process");
    const child = spawn(
      process.execPath,
      [...process.execArgv, entry, print, cwdOfEvent, script, ...process.argv.slice(2)],
      { cwd: process.cwd(), env: process.env, detached: true, stdio: "ignore" },
    );
    child.on("error", () => undefined);
    child.unref();
  } catch {
    // No daemon this time: the next event tries again.
  }
}

/** Today's path, in this process: the full `rein`, fed the stdin already read. */
async function decideHere(read: ReadInput | undefined): Promise<void> {
  if (read !== undefined) (globalThis as Record<symbol, unknown>)[Symbol.for("rein.hook.stdin")] = read;
  await import("./bin.js");
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const timeoutMs = timeoutOption(argv) ?? 20_000;
  const env = process.env;
  if (!daemonEnabled(env) || process.stdin.isTTY || Number.isNaN(timeoutMs)) return decideHere(undefined);
  // REIN_HOOK_DAEMON_TRACE=1 says on stderr which path answered (tests, the benchmark, a user wondering).
  const read = await readInput(timeoutMs);
  if (!("bytes" in read) || read.bytes.length > CLIENT_MAX_INPUT_BYTES) return decideHere(read);
  const cwdOfEvent = eventCwd(read.bytes);
  if (cwdOfEvent === undefined) return decideHere(read);
  let script: string;
  let paths: DaemonPaths | undefined;
  let print: string;
  let state: string;
  try {
    script = realpathSync(process.argv[1] ?? "");
    state = processState({
      execPath: process.execPath,
      execArgv: process.execArgv,
      script,
      cwd: process.cwd(),
      argv,
      eventCwd: cwdOfEvent,
      uid: process.getuid?.() ?? -1,
      env,
    });
    print = fingerprint(state);
    paths = daemonPaths(env, print);
    if (paths === undefined || privateDir(paths.dir) === undefined) return decideHere(read);
  } catch {
    return decideHere(read);
  }
  let answer: Answer | undefined;
  try {
    if (isPrivate(paths.socket, "socket") && isPrivate(paths.token, "file")) {
      const token = readFileSync(paths.token, "utf8").trim();
      const request = {
        v: PROTOCOL,
        token,
        fingerprint: print,
        state,
        input: read.bytes.toString("utf8"),
      } as const;
      answer = await askDaemon(paths, request, timeoutMs + REPLY_GRACE_MS);
    }
  } catch {
    answer = undefined;
  }
  if (env.REIN_HOOK_DAEMON_TRACE === "1")
    writeSync(2, `rein-hook: ${answer ? "answered by the daemon" : "decided in process"}\n`);
  if (answer === undefined) {
    await startDaemon(paths, print, cwdOfEvent, script);
    return decideHere(read);
  }
  if (answer.stdout !== "") writeSync(1, answer.stdout);
  if (answer.stderr !== "") writeSync(2, answer.stderr);
  process.exitCode = answer.exitCode;
}

await main();
