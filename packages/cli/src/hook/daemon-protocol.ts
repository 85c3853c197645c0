/**
 * What the hook client (hook-client.ts) and the hook daemon (hook-daemon.ts)
 * agree on: where a daemon listens, which process state it may answer for (the
 * fingerprint), how a file is checked to be private, the request and answer.
 * Node built-ins only: the client imports this and nothing else of Rein's on
 * its fast path.
 *
 * Invariants:
 * - A daemon answers only for the exact process state it was started with:
 *   Node's path and flags, the client script, the working directory, the
 *   command line, the event's working directory, the user id and the whole
 *   environment (`processState`). Each request carries that state whole and the
 *   daemon compares it with its own, byte for byte; the fingerprint (a hash of it)
 *   only names the socket, so a collision costs the warm path, never an answer
 *   for another state. Anything different is another daemon (another socket) or
 *   the in-process path. The pinned project
 *   (hook/pinned-project.ts: `--project`, `$CLAUDE_PROJECT_DIR`,
 *   `$GEMINI_PROJECT_DIR`) is in it through the command line and the environment.
 * - The socket, its token and its start marker live in `<Rein config dir>/hookd`
 *   (`$REIN_CONFIG_DIR`, else `$XDG_CONFIG_HOME/rein`, else `~/.config/rein`:
 *   beside the trust records, which Rein's sandbox neither reads nor writes and
 *   the hook's protected targets refuse), a folder that must be a real folder
 *   of this user with no group or other access; a socket or token that is not
 *   this user's, or is open to others, is not used.
 */
// Built-ins through `process.getBuiltinModule`, not `import`: on the client's path an
// imported built-in also costs its ES module wrapper (these and the client's own: about
// 6 ms of CPU per hook process, measured in session 8). Node built-ins only, still.
const { lstatSync, mkdirSync } = process.getBuiltinModule("node:fs");
const { homedir } = process.getBuiltinModule("node:os");
const { join, resolve } = process.getBuiltinModule("node:path");

export const PROTOCOL = 1;

/** The largest hook input (hook-input.ts MAX_INPUT_BYTES; a test pins them equal). */
export const CLIENT_MAX_INPUT_BYTES = 8 * 1024 * 1024;

/** Unix socket paths longer than this do not bind everywhere (macOS: 104 bytes with the NUL). */
const MAX_SOCKET_PATH = 92; // the daemon binds `<socket>.<pid>` first

/** Environment switches (documented in docs/guides/agent-hooks.md). */
export const DAEMON_ENV = "REIN_HOOK_DAEMON";
export const IDLE_ENV = "REIN_HOOK_DAEMON_IDLE_MS";
/** `REIN_HOOK_DAEMON_TRACE=1`: the client says on stderr whether the daemon answered. */
export const TRACE_ENV = "REIN_HOOK_DAEMON_TRACE";
export const DEFAULT_IDLE_MS = 10 * 60 * 1000;

/** `REIN_HOOK_DAEMON=off` (or `0`): every event is decided in the hook's own process. */
export const daemonEnabled = (env: NodeJS.ProcessEnv): boolean =>
  env[DAEMON_ENV] !== "off" && env[DAEMON_ENV] !== "0";

/** How long an unused daemon lives, in ms (`REIN_HOOK_DAEMON_IDLE_MS`, default 10 minutes). */
export function idleMs(env: NodeJS.ProcessEnv): number {
  const value = Number(env[IDLE_ENV]);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_IDLE_MS;
}

/** The user's Rein config dir, as `@rein/sdk`'s `reinConfigDir` (a test pins them equal). */
export function configDirOf(env: NodeJS.ProcessEnv): string {
  if (env.REIN_CONFIG_DIR) return resolve(env.REIN_CONFIG_DIR);
  const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(homedir(), ".config");
  return join(base, "rein");
}

export const daemonDir = (env: NodeJS.ProcessEnv): string => join(configDirOf(env), "hookd");

export interface ProcessState {
  execPath: string;
  execArgv: readonly string[];
  /** The client script the agent runs (its absolute path). */
  script: string;
  cwd: string;
  /** The command line after the script (`hook claude-code --timeout 5000`). */
  argv: readonly string[];
  /** The event's `cwd` (where the config is found from), or "" when it has none. */
  eventCwd: string;
  uid: number;
  env: NodeJS.ProcessEnv;
}

/** The process state as one canonical string: what a request carries and the daemon compares. */
export function processState(state: ProcessState): string {
  const env = Object.entries(state.env)
    .filter((entry): entry is [string, string] => typeof entry[1] === "string")
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    PROTOCOL,
    state.execPath,
    state.execArgv,
    state.script,
    state.cwd,
    state.argv,
    state.eventCwd,
    state.uid,
    env,
  ]);
}

/**
 * The socket's name for a state: 96 bits of three seeded FNV-1a passes, 24 hex
 * digits. Not a cryptographic hash on purpose: loading `node:crypto` cost the
 * client ~5 ms a call, and the daemon compares the whole state anyway.
 */
export function fingerprint(state: ProcessState | string): string {
  const text = typeof state === "string" ? state : processState(state);
  // The three passes in one loop (the same hashes): the state is a few KB walked by
  // a hook process whose code never gets optimised, so each pass cost ~0.5 ms.
  let a = 0x811c9dc5;
  let b = 0x01000193;
  let c = 0x9e3779b9;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x01000193);
    c = Math.imul(c ^ code, 0x01000193);
  }
  const hex = (hash: number) => (hash >>> 0).toString(16).padStart(8, "0");
  return hex(a) + hex(b) + hex(c);
}

export interface DaemonPaths {
  dir: string;
  socket: string;
  token: string;
  /** Held (O_EXCL) by the client that started a daemon until the daemon listens. */
  starting: string;
}

export function daemonPaths(env: NodeJS.ProcessEnv, print: string): DaemonPaths | undefined {
  const dir = daemonDir(env);
  const base = join(dir, print);
  const paths = { dir, socket: `${base}.sock`, token: `${base}.token`, starting: `${base}.starting` };
  return Buffer.byteLength(paths.socket) <= MAX_SOCKET_PATH ? paths : undefined;
}

const uid = () => process.getuid?.() ?? -1;

/** Whether `path` is this user's, of `kind`, not a symlink, with no group or other access. */
export function isPrivate(path: string, kind: "dir" | "socket" | "file"): boolean {
  const stats = lstatSync(path, { throwIfNoEntry: false });
  if (stats === undefined || stats.uid !== uid() || (stats.mode & 0o077) !== 0) return false;
  return kind === "dir" ? stats.isDirectory() : kind === "socket" ? stats.isSocket() : stats.isFile();
}

/** The daemon folder, created 0700 if absent; undefined when it exists but is not private. */
export function privateDir(dir: string): string | undefined {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return isPrivate(dir, "dir") ? dir : undefined;
}

/** One line of JSON from the client. */
export interface DaemonRequest {
  v: typeof PROTOCOL;
  token: string;
  fingerprint: string;
  /** The whole process state (`processState`), compared by the daemon with its own. */
  state: string;
  /** The hook input, as read from stdin. */
  input: string;
}

/** One line of JSON from the daemon: the answer, or why it will not give one. */
export type DaemonReply =
  | { v: typeof PROTOCOL; exitCode: number; stdout: string; stderr: string }
  | { v: typeof PROTOCOL; refused: string };

/** The reply if it is a well-formed answer; undefined for anything else. */
export function answerOf(value: unknown): { exitCode: number; stdout: string; stderr: string } | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const reply = value as Record<string, unknown>;
  if (reply.v !== PROTOCOL) return undefined;
  const { exitCode, stdout, stderr } = reply;
  if (exitCode !== 0 && exitCode !== 1 && exitCode !== 2) return undefined;
  if (typeof stdout !== "string" || typeof stderr !== "string") return undefined;
  return { exitCode, stdout, stderr };
}
