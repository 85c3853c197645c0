/**
 * Session grants: what "allow for this session" covers, and proof that Rein wrote it.
 *
 * Invariants (security invariants 4 and 5):
 * - a grant is exactly as wide as what the prompt showed: the same simple commands
 *   (argv, assignments, redirections and wrappers all equal) for a shell call, the
 *   same canonical paths for a path tool, the same arguments otherwise; a compound
 *   command is covered only when every part is, and a command with parts the parser
 *   could not resolve (`unknown`) is never covered, by any scope (an `exact` grant
 *   included: the same text can run other code next time, e.g. `source ./x.sh` after
 *   x.sh changed, or a value evaluated as arithmetic);
 * - a grant read back from a session counts only with a valid HMAC-SHA256 made with
 *   the user's grant key (kept outside the project, 0600) over the grant and the
 *   session id; anything else is ignored and reported.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { argsHash, canonicalJson, reinConfigDir, type ToolGateCall } from "@rein/sdk";

/** One simple command as the shell facts describe it (see `facts.command` in @rein/sdk). */
export interface GrantedCommand {
  argv: string[];
  assignments: string[];
  redirections: { op: string; target: string }[];
  wrappers: string[];
  /**
   * The words as written, wrappers and their options included (`sudo -u root git push`,
   * `./git status`): `argv` alone names the program by its base name and drops a
   * wrapper's options, so two commands the person would tell apart read the same.
   * In a prefix grant: the written words up to the end of the prefix. Absent in
   * grants written before it existed (those compare on the other fields only).
   */
  original?: string[];
  /** In a prefix grant: this command is granted exactly (no `*`): it had no subcommand to stop at. */
  exact?: boolean;
}

/** A session grant, as stored in a `rein.permission-grant` entry's `data`. */
export interface PermissionGrant {
  tool: string;
  /** The decider whose `ask` this grant answers. */
  askedBy: string;
  /**
   * `commands`: these simple commands; `prefix`: simple commands whose argv starts
   * with a granted one's (same wrappers and assignments, no other redirections);
   * `paths`: these canonical paths; `exact`: these arguments.
   */
  scope: "commands" | "prefix" | "paths" | "exact";
  commands?: GrantedCommand[];
  /** Canonical paths relative to the project root. */
  paths?: string[];
  /** For `exact`: sha256 of the canonical JSON of the arguments. */
  argsHash?: string;
  grantedAt: string;
  /** HMAC-SHA256 (hex) of the grant without `mac`, bound to the session id. */
  mac?: string;
}

/** What the shell helper's `facts.command` carries (read structurally: the field is declared elsewhere). */
interface CommandFactsLike {
  commands: readonly (GrantedCommand & { original?: readonly string[] })[];
  unknown: readonly unknown[];
}
interface PathFactLike {
  relative: string;
  inside: boolean;
}

type Call = Pick<ToolGateCall, "name" | "args" | "facts">;

const commandFacts = (call: Call) => (call.facts as { command?: CommandFactsLike } | undefined)?.command;
const pathFacts = (call: Call) => (call.facts as { paths?: readonly PathFactLike[] } | undefined)?.paths;

const copyCommand = (c: GrantedCommand): GrantedCommand => ({
  argv: [...c.argv],
  assignments: [...c.assignments],
  redirections: c.redirections.map((r) => ({ op: r.op, target: r.target })),
  wrappers: [...c.wrappers],
  ...(Array.isArray(c.original) ? { original: [...c.original] } : {}),
});

/** The scope a session grant for this call would have (before time and mac). */
export function scopeOf(
  call: Call,
  preferExact: boolean,
): Pick<PermissionGrant, "scope" | "commands" | "paths" | "argsHash"> {
  const command = commandFacts(call);
  if (!preferExact && command && command.unknown.length === 0 && command.commands.length > 0) {
    return { scope: "commands", commands: command.commands.map(copyCommand) };
  }
  const paths = pathFacts(call);
  if (!preferExact && paths && paths.length > 0 && paths.every((p) => p.inside)) {
    return { scope: "paths", paths: [...new Set(paths.map((p) => p.relative))] };
  }
  return { scope: "exact", argsHash: argsHash(call.args) };
}

/** Equal commands; a grant written before `original` existed compares on the other fields. */
function sameCommand(granted: GrantedCommand, part: GrantedCommand): boolean {
  if (granted.original !== undefined) return canonicalJson(granted) === canonicalJson(part);
  const { original: _original, ...rest } = part;
  return canonicalJson(granted) === canonicalJson(rest);
}

/**
 * The command prefix a project grant keeps: the program and its subcommand, when the
 * word right after the program is a plain word (`git status`, `npm test`). Anything
 * else has no prefix (`undefined`) and is granted exactly as shown: an option first
 * (`git -C . push origin main`, `rm -rf build`, `ls -la`), a path or dotted word
 * (`cat .env`), or no argument at all (`git`). Dropping a word the person saw, or
 * widening the program alone to `program *`, would grant more than was shown.
 */
export function commandPrefix(argv: readonly string[]): string[] | undefined {
  const [program, next] = argv;
  if (program === undefined || next === undefined) return undefined;
  return /^[A-Za-z][\w.-]*$/.test(next) ? [program, next] : undefined;
}

/**
 * The written words that end where the prefix ends, or undefined when the written
 * words do not line up with argv (a shell string such as `bash -c 'git push'`):
 * such a command is granted exactly.
 */
function writtenPrefix(c: GrantedCommand, prefix: readonly string[]): string[] | undefined {
  const original = c.original;
  if (original === undefined) return undefined;
  const offset = original.length - c.argv.length;
  if (offset < 0) return undefined;
  const program = original[offset] as string;
  if (program !== c.argv[0] && program.split("/").at(-1) !== c.argv[0]) return undefined;
  for (let i = 1; i < c.argv.length; i++) if (original[offset + i] !== c.argv[i]) return undefined;
  return original.slice(0, offset + prefix.length);
}

function prefixOf(c: GrantedCommand): GrantedCommand {
  const copy = copyCommand(c);
  const prefix = commandPrefix(c.argv);
  const written = prefix === undefined ? undefined : writtenPrefix(c, prefix);
  if (prefix === undefined || (c.original !== undefined && written === undefined))
    return { ...copy, exact: true };
  return { ...copy, argv: prefix, ...(written !== undefined ? { original: written } : {}) };
}

/**
 * The scope of "always allow in this project": for a shell call, each simple
 * command's prefix (see `commandPrefix`), or the command exactly where it has none;
 * otherwise what a session grant covers.
 */
export function prefixScopeOf(
  call: Call,
): Pick<PermissionGrant, "scope" | "commands" | "paths" | "argsHash"> {
  const command = commandFacts(call);
  if (command && command.unknown.length === 0 && command.commands.length > 0) {
    return { scope: "prefix", commands: command.commands.map(prefixOf) };
  }
  return scopeOf(call, false);
}

const startsWith = (argv: readonly string[], prefix: readonly string[]) =>
  prefix.length > 0 && prefix.length <= argv.length && prefix.every((word, i) => argv[i] === word);

function prefixCovers(granted: GrantedCommand, part: GrantedCommand): boolean {
  if (granted.exact === true) {
    const { exact: _exact, ...command } = granted;
    return sameCommand(command, part);
  }
  const redirections = granted.redirections.map((r) => canonicalJson(r));
  return (
    startsWith(part.argv, granted.argv) &&
    (granted.original === undefined ||
      (part.original !== undefined && startsWith(part.original, granted.original))) &&
    canonicalJson(part.wrappers) === canonicalJson(granted.wrappers) &&
    canonicalJson(part.assignments) === canonicalJson(granted.assignments) &&
    part.redirections.every((r) => redirections.includes(canonicalJson(r)))
  );
}

/** A shell call whose analysis has an unknown part: no grant covers it, whatever its scope. */
export function notUnderstood(call: Call): boolean {
  const command = commandFacts(call);
  return command !== undefined && command.unknown.length > 0;
}

/** Whether a grant covers a call asked about by `askedBy`. */
export function covers(grant: PermissionGrant, call: Call, askedBy: string): boolean {
  if (grant.tool !== call.name || grant.askedBy !== askedBy) return false;
  if (notUnderstood(call)) return false;
  if (grant.scope === "prefix") {
    const command = commandFacts(call);
    if (!command || command.unknown.length > 0 || command.commands.length === 0) return false;
    return command.commands.every((part) => grant.commands?.some((g) => prefixCovers(g, copyCommand(part))));
  }
  if (grant.scope === "commands") {
    const command = commandFacts(call);
    if (!command || command.unknown.length > 0 || command.commands.length === 0) return false;
    return command.commands.every((part) => grant.commands?.some((g) => sameCommand(g, copyCommand(part))));
  }
  if (grant.scope === "paths") {
    const paths = pathFacts(call);
    if (!paths || paths.length === 0) return false;
    return paths.every((p) => p.inside && grant.paths?.includes(p.relative) === true);
  }
  return grant.argsHash === argsHash(call.args);
}

/** A granted command's words as the person saw them (wrappers, their options and assignments included). */
const written = (c: GrantedCommand): string[] => {
  if (c.original === undefined) return [...c.wrappers, ...c.assignments, ...c.argv];
  // `env X=1 git push` keeps its assignments in the written words; a prefix `X=1 git push` does not.
  const inWords = c.assignments.every((a) => c.original?.includes(a));
  return [...(inWords ? [] : c.assignments), ...c.original];
};

/** How a grant reads in policy-rule grammar, as the prompt shows it: `bash(git status)`, `write(src/a.ts)`. */
export function describeScope(
  tool: string,
  scope: Pick<PermissionGrant, "scope" | "commands" | "paths">,
): string {
  if (scope.scope === "commands") {
    const parts = (scope.commands ?? []).map((c) =>
      [...written(c), ...c.redirections.map((r) => `${r.op}${r.target}`)].join(" "),
    );
    return `${parts.map((part) => `${tool}(${part})`).join(" + ")} exactly (no other arguments or commands)`;
  }
  if (scope.scope === "prefix") {
    const parts = (scope.commands ?? []).map((c) =>
      [
        ...written(c),
        ...(c.exact === true ? [] : ["*"]),
        ...c.redirections.map((r) => `${r.op}${r.target}`),
      ].join(" "),
    );
    return parts.map((part) => `${tool}(${part})`).join(" + ");
  }
  if (scope.scope === "paths") return `${(scope.paths ?? []).map((p) => `${tool}(${p})`).join(" + ")} only`;
  return "these exact arguments only";
}

/** What the session and project options say for a shell call that is not fully understood: nothing is remembered. */
export const NOT_REMEMBERED =
  "not remembered: the command is not fully understood, so it is asked every time";

// --- proof that Rein wrote it ------------------------------------------------------

/** The directory holding the grant key: `$REIN_CONFIG_DIR`, `$XDG_CONFIG_HOME/rein`, or `~/.config/rein`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  return reinConfigDir(env);
}

/** Reads the grant key, creating it (0600, in a 0700 directory) on first use. */
export function loadGrantKey(file: string): Buffer {
  try {
    return Buffer.from(fs.readFileSync(file, "utf8").trim(), "hex");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  try {
    fs.writeFileSync(file, `${key.toString("hex")}\n`, { mode: 0o600, flag: "wx" });
    return key;
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return loadGrantKey(file);
    throw error;
  }
}

function macOf(key: Buffer, grant: PermissionGrant, sessionId: string): string {
  const { mac: _mac, ...rest } = grant;
  return createHmac("sha256", key)
    .update(canonicalJson({ grant: rest, session: sessionId }))
    .digest("hex");
}

export function sign(key: Buffer, grant: PermissionGrant, sessionId: string): PermissionGrant {
  return { ...grant, mac: macOf(key, grant, sessionId) };
}

/** Whether the grant carries a valid mac for this session. */
export function verify(key: Buffer, grant: PermissionGrant, sessionId: string): boolean {
  if (typeof grant.mac !== "string" || !/^[0-9a-f]{64}$/.test(grant.mac)) return false;
  const expected = Buffer.from(macOf(key, grant, sessionId), "hex");
  return timingSafeEqual(expected, Buffer.from(grant.mac, "hex"));
}

/** Structural check of a stored grant (before its mac is checked). */
export function isGrant(value: unknown): value is PermissionGrant {
  if (typeof value !== "object" || value === null) return false;
  const g = value as Partial<PermissionGrant>;
  if (typeof g.tool !== "string" || typeof g.askedBy !== "string" || typeof g.grantedAt !== "string")
    return false;
  if (g.scope === "commands" || g.scope === "prefix") return Array.isArray(g.commands);
  if (g.scope === "paths") return Array.isArray(g.paths);
  return g.scope === "exact" && typeof g.argsHash === "string";
}
