/**
 * The hook daemon: one per user, process state and event directory
 * (hook/daemon-protocol.ts), started by the hook client when it found none.
 * It builds the stack the in-process path would build, once, and then answers
 * events over a private Unix socket with the very functions `rein hook <agent>`
 * uses (commands/hook.ts `decideOnStack`: `handleEvent` and the audit). It is
 * a transport, not a second decision path. Its audit keeps each agent
 * session's Rein session open (hook-audit.ts): an answer is sent once the
 * entry is written to the OS, the fsync follows in the background (group
 * commit), and a session is closed `sessionIdleMs` after its last entry, at
 * once when another writer waits for it, and when the daemon stops.
 *
 * Invariants:
 * - It never answers with a stale stack: before each decision every file the
 *   stack rests on is re-checked (watched-files.ts); on any change it refuses
 *   and exits, so the client decides in process (where a changed, untrusted
 *   project is refused, fail closed) and starts a fresh daemon.
 * - It answers only a request with its token (read from a 0600 file beside the
 *   socket) and its exact process state (not only its fingerprint); anything else is refused.
 * - It exits after `REIN_HOOK_DAEMON_IDLE_MS` without a request (default 10
 *   minutes), and within 5 s of its socket path no longer being its socket or
 *   a project file changing (a deleted project included).
 * - It writes nothing to stdout or stderr (it has none): a failure to start is
 *   an exit, and the client keeps deciding in process.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { lstatSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { sep } from "node:path";
import { loadShellParser } from "@rein/sdk/shell";
import type { Agent } from "../agent/build-agent.js";
import {
  buildHookStack,
  decideOnStack,
  failureFrom,
  type HookOptions,
  type HookSettings,
  hookSettings,
} from "../commands/hook.js";
import { stackFiles } from "../config/stack-files.js";
import type { GlobalOptions } from "../globals.js";
import { reinPackages } from "../trust/install-root.js";
import type { HookAnswer } from "./agent-protocols.js";
import {
  CLIENT_MAX_INPUT_BYTES,
  type DaemonPaths,
  type DaemonReply,
  daemonPaths,
  fingerprint,
  idleMs,
  PROTOCOL,
  privateDir,
  processState,
} from "./daemon-protocol.js";
import type { AuditWriter } from "./hook-audit.js";
import { type HookInput, parseHookInput } from "./hook-input.js";
import { auditFor } from "./hook-options.js";
import { configSearchDir } from "./pinned-project.js";
import { WatchedFiles } from "./watched-files.js";

/** A request line longer than this is not a hook input (JSON escaping at most doubles it, plus fields). */
const MAX_REQUEST_BYTES = 2 * CLIENT_MAX_INPUT_BYTES + 64 * 1024;
/** How often the daemon checks its socket is still its own. */
const SOCKET_CHECK_MS = 5_000;
/**
 * An audit session is given back this long after its last entry
 * (`REIN_HOOK_SESSION_IDLE_MS`, default 3 s): well under the 10 s another hook
 * process waits for a session's lock, so even a writer that leaves no
 * `.wanted` marker (an older Rein) gets it.
 */
function sessionIdleMs(env: NodeJS.ProcessEnv): number {
  const value = Number(env.REIN_HOOK_SESSION_IDLE_MS);
  return Number.isInteger(value) && value > 0 ? value : 3_000;
}

/** The daemon's command line as `rein` parses it (the entry point parses it with the CLI's own program). */
export interface ParsedHookCommand {
  agentArg: string;
  options: HookOptions;
  globals: GlobalOptions;
}

export type HookCommandParser = (argv: readonly string[]) => Promise<ParsedHookCommand | undefined>;

const sameToken = (given: unknown, token: string): boolean => {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** A socket file's identity: inode numbers are reused at once, so with its change time. */
function socketIdentity(path: string): string | undefined {
  try {
    const stats = lstatSync(path, { bigint: true });
    return `${stats.dev}:${stats.ino}:${stats.ctimeNs}`;
  } catch {
    return undefined;
  }
}

function removeIfOurs(paths: DaemonPaths, socketId: string | undefined, token: string): void {
  try {
    if (socketId !== undefined && socketIdentity(paths.socket) === socketId) unlinkSync(paths.socket);
  } catch {
    // Gone already.
  }
  try {
    if (readFileSync(paths.token, "utf8").trim() === token) unlinkSync(paths.token);
  } catch {
    // Gone already.
  }
}

/** `args`: the fingerprint, the event's cwd, the client script, then the `rein` command line. */
export async function runHookDaemon(
  args: readonly string[],
  loadedModules: readonly string[],
  parseCommandLine: HookCommandParser,
): Promise<void> {
  const [print = "", eventCwd = "", script = "", ...argv] = args;
  const env = process.env;
  const paths = daemonPaths(env, print);
  if (paths === undefined) return;
  let built: Agent | undefined;
  let audit: AuditWriter | undefined;
  let settings: HookSettings;
  let cwd: string;
  try {
    const own = processState({
      execPath: process.execPath,
      execArgv: process.execArgv,
      script,
      cwd: process.cwd(),
      argv,
      eventCwd,
      uid: process.getuid?.() ?? -1,
      env,
    });
    // Started for another state than this process's: it could only answer wrongly.
    if (fingerprint(own) !== print || privateDir(paths.dir) === undefined) return;
    const parsed = await parseCommandLine(argv);
    if (parsed === undefined) return;
    settings = hookSettings(parsed.agentArg, parsed.options);
    cwd = eventCwd || parsed.globals.cwd;
    built = await buildHookStack(cwd, parsed.globals, settings.project);
    await loadShellParser(); // the grammar loads once here, not on the first event
    const installed = reinPackages().map((dir) => (dir.endsWith(sep) ? dir : dir + sep));
    const watched = new WatchedFiles((file) => installed.some((dir) => file.startsWith(dir)));
    const searched = configSearchDir(settings.project, cwd);
    for (const file of stackFiles(built.loaded, searched, parsed.globals.config !== undefined, env))
      watched.add(file);
    watched.addLoaded(loadedModules);
    audit = auditFor(built.loaded, { keepOpen: true, idleCloseMs: sessionIdleMs(env) });
    await serve(
      paths,
      { print, state: own },
      built,
      audit,
      settings,
      { cwd, searched },
      parsed.globals,
      watched,
      loadedModules,
    );
  } catch {
    // Not started: the client decides in process, which says why.
  } finally {
    audit?.close(); // fsyncs and gives every session back
    try {
      unlinkSync(paths.starting);
    } catch {
      // Not there.
    }
    await built?.dispose().catch(() => undefined);
  }
}

async function serve(
  paths: DaemonPaths,
  self: { print: string; state: string },
  built: Agent,
  audit: AuditWriter | undefined,
  settings: HookSettings,
  where: { cwd: string; searched: string },
  globals: GlobalOptions,
  watched: WatchedFiles,
  loadedModules: readonly string[],
): Promise<void> {
  const { cwd, searched } = where;
  const { print, state } = self;
  // The request carries the client's whole state, JSON-escaped (at most ~2x) inside it.
  const maxRequestBytes = MAX_REQUEST_BYTES + 2 * Buffer.byteLength(state);
  const token = randomBytes(32).toString("hex");
  process.umask(0o077); // the socket and the token file are created 0600
  const scratch = `${paths.token}.${process.pid}.tmp`;
  writeFileSync(scratch, `${token}\n`, { mode: 0o600 });
  renameSync(scratch, paths.token);
  // Bound beside, then renamed over the path: a daemon this replaces never sees the path empty.
  const bound = `${paths.socket}.${process.pid}`;
  try {
    unlinkSync(bound);
  } catch {
    // None.
  }
  let queue: Promise<unknown> = Promise.resolve();
  let lastUsed = Date.now();
  let socketId: string | undefined;
  let stopping = false;
  const idle = idleMs(process.env);
  const server: Server = createServer({ allowHalfOpen: true }); // the client ends its side after the request
  const finished = new Promise<void>((resolve) => server.on("close", resolve));
  const stop = () => {
    if (stopping) return;
    stopping = true;
    clearInterval(timer);
    removeIfOurs(paths, socketId, token);
    server.close();
  };

  const decide = async (text: string): Promise<DaemonReply> => {
    const changed = watched.changed();
    if (changed !== undefined) {
      stop();
      return { v: PROTOCOL, refused: `${changed} changed since this daemon started` };
    }
    let input: HookInput | undefined;
    let answer: HookAnswer;
    try {
      input = parseHookInput(settings.agent, text);
      if ((input.cwd || globals.cwd) !== cwd) return { v: PROTOCOL, refused: "another working directory" };
      // The event's folder moved into or out of the pinned project (a symlink swapped): another stack.
      if (configSearchDir(settings.project, cwd) !== searched) {
        stop();
        return { v: PROTOCOL, refused: "the working directory moved against the pinned project" };
      }
      answer = await decideOnStack(built, input, settings, audit);
    } catch (error) {
      answer = failureFrom(input, error, settings.onFailure);
    }
    // Modules a decision loaded for the first time are checked from now on too.
    watched.addLoaded(loadedModules);
    return { v: PROTOCOL, exitCode: answer.exitCode, stdout: answer.stdout, stderr: answer.stderr };
  };

  const handle = (socket: Socket) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const reply = (value: DaemonReply) => socket.end(`${JSON.stringify(value)}\n`);
    // Settles once the answer is out (the end written and shut down: the client has it) or the socket is gone.
    const sent = new Promise<void>((resolve) => {
      socket.once("finish", resolve);
      socket.once("close", resolve);
    });
    socket.on("error", () => undefined);
    socket.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxRequestBytes) socket.destroy();
      else chunks.push(chunk);
    });
    socket.on("end", () => {
      lastUsed = Date.now();
      let request: Record<string, unknown>;
      try {
        request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        return reply({ v: PROTOCOL, refused: "not a request" });
      }
      if (request.v !== PROTOCOL || !sameToken(request.token, token) || request.fingerprint !== print)
        return reply({ v: PROTOCOL, refused: "wrong token or fingerprint" });
      // Same socket name is not same state: only the exact state this daemon was built for.
      if (request.state !== state) return reply({ v: PROTOCOL, refused: "another process state" });
      if (typeof request.input !== "string") return reply({ v: PROTOCOL, refused: "no input" });
      if (stopping) return reply({ v: PROTOCOL, refused: "stopping" });
      const text = request.input;
      const answered = queue.then(() => decide(text));
      answered.then(reply, () => reply({ v: PROTOCOL, refused: "the daemon failed" }));
      // Rein itself upgraded or rebuilt: the next event is decided by a fresh process. Checked
      // once the answer is out, not before: `end()` shuts the socket down only when the event
      // loop runs, so ~a thousand stats right after it held the client's answer back. In the
      // queue, so no other answer comes before the check.
      queue = answered
        .then(
          () => sent,
          () => sent,
        )
        .then(() => {
          if (!stopping && watched.installChanged() !== undefined) stop();
        })
        .catch(() => undefined);
    });
  };
  server.on("connection", handle);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(bound, () => resolve());
  });
  renameSync(bound, paths.socket);
  socketId = socketIdentity(paths.socket);
  try {
    unlinkSync(paths.starting);
  } catch {
    // Not there.
  }
  const timer = setInterval(
    () => {
      if (Date.now() - lastUsed >= idle) return stop();
      // Replaced by another daemon, or its project changed or was deleted: nothing left to answer for.
      if (socketIdentity(paths.socket) !== socketId || watched.changed() !== undefined) stop();
    },
    Math.min(idle, SOCKET_CHECK_MS),
  );
  await finished;
  await queue;
}
