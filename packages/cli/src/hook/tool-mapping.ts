/**
 * The agents' tools as Rein tool calls: Claude Code's `Bash`, `Read`, `Write`,
 * `Edit`, `MultiEdit`, ..., Codex's (`Bash`, `apply_patch`, MCP tools) and
 * Gemini CLI's (`run_shell_command`, `read_file`, ...) become calls to Rein's
 * first-party tools (`bash`, `read`, `write`, `edit`, `find`, `grep`, `ls`)
 * with Rein's argument names, so a rule written once (`bash(git push *)`,
 * `read(.env)`) decides in every agent with the same facts (the parsed
 * command, canonical paths).
 *
 * Invariant: one agent call may be several Rein calls (a MultiEdit, a patch
 * touching three files); the caller takes the strictest verdict. A tool not in
 * the table is `unmapped`: decided under its own name, and refused when its
 * input names a path or a command Rein cannot check (fail closed).
 */
import type { AgentName } from "./agent-protocols.js";

export interface ReinCall {
  name: string;
  args: Record<string, unknown>;
  /** The directory the agent runs it in when the input names one (Codex `workdir`, Gemini `dir_path`). */
  cwd?: string;
}

export interface MappedCall {
  /** The Rein calls that stand for the agent's call (at least one). */
  calls: ReinCall[];
  /** `false`: the agent's tool is not in the table. */
  mapped: boolean;
  /** For an unmapped tool: the input field that names a path or command Rein cannot check. */
  unchecked?: string;
  /**
   * For a mapped tool: an input field Rein reads whose value is not of the type the
   * mapping understands (a command that is an object, a path that is a number): the
   * call would be decided as an empty command or path, so it is refused instead.
   */
  malformed?: string;
}

type Args = Record<string, unknown>;
type Mapper = (input: Args) => ReinCall[];

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const num = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined;

/** Copies the defined values only (a Rein schema refuses `undefined`). */
function defined(args: Record<string, unknown>): Args {
  return Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
}

/** The directory a shell call names for itself (Codex `workdir`, Gemini `dir_path` / `directory`). */
const workdir = (input: Args): string | undefined =>
  str(input.workdir) ?? str(input.dir_path) ?? str(input.directory) ?? str(input.cwd);

/** An argv (Codex's `shell` sends `["bash", "-lc", "..."]`) as the shell command it runs, each word quoted. */
const quoted = (argv: readonly string[]): string =>
  argv
    .map((word) => (/^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`))
    .join(" ");

/**
 * Codex's own envelope: `exec_command` runs every `cmd` as `$SHELL -lc cmd`, and its `shell`
 * tool is taught to send that same argv. The login shell's profile files are the user's own
 * (the ones every Codex command runs under), so exactly `bash -lc X` is decided as `X`. Any
 * other shape (`env HOME=. bash -lc`, `bash -l -c`, `sh -lc`, extra words) is decided as
 * written, and a login shell is unknown there: the profile it runs is not the user's to vouch for.
 */
const CODEX_LOGIN_SHELLS = new Set(["bash", "/bin/bash", "/usr/bin/bash"]);
const codexEnvelope = (argv: readonly string[]): string | undefined =>
  argv.length === 3 && CODEX_LOGIN_SHELLS.has(argv[0] as string) && argv[1] === "-lc" ? argv[2] : undefined;

const commandText = (value: unknown): string | undefined =>
  typeof value === "string"
    ? value
    : Array.isArray(value) && value.length > 0 && value.every((word) => typeof word === "string")
      ? (codexEnvelope(value as string[]) ?? quoted(value as string[]))
      : undefined;

const bash: Mapper = (input) => {
  const cwd = workdir(input);
  const command = commandText(input.command) ?? commandText(input.cmd) ?? "";
  return [{ name: "bash", args: { command }, ...(cwd !== undefined ? { cwd } : {}) }];
};
const read =
  (field: string): Mapper =>
  (input) => [
    {
      name: "read",
      args: defined({ path: str(input[field]) ?? "", offset: num(input.offset), limit: num(input.limit) }),
    },
  ];
const write =
  (field: string): Mapper =>
  (input) => [{ name: "write", args: { path: str(input[field]) ?? "", content: str(input.content) ?? "" } }];
const edit =
  (field: string): Mapper =>
  (input) => [
    {
      name: "edit",
      args: defined({
        path: str(input[field]) ?? "",
        oldText: str(input.old_string) ?? "",
        newText: str(input.new_string) ?? "",
        replaceAll: typeof input.replace_all === "boolean" ? input.replace_all : undefined,
      }),
    },
  ];
const multiEdit: Mapper = (input) => {
  const edits = Array.isArray(input.edits) ? (input.edits as Args[]) : [];
  const path = str(input.file_path) ?? "";
  if (edits.length === 0) return [{ name: "edit", args: { path, oldText: "", newText: "" } }];
  return edits.map((one) => edit("file_path")({ ...one, file_path: path })[0] as ReinCall);
};
const find =
  (field: string): Mapper =>
  (input) => [
    { name: "find", args: defined({ pattern: str(input.pattern) ?? "", path: str(input[field]) }) },
  ];
const grep =
  (field: string, globField: string): Mapper =>
  (input) => [
    {
      name: "grep",
      args: defined({
        pattern: str(input.pattern) ?? "",
        path: str(input[field]),
        glob: str(input[globField]),
      }),
    },
  ];
const ls =
  (field: string): Mapper =>
  (input) => [{ name: "ls", args: defined({ path: str(input[field]) }) }];
const webFetch: Mapper = (input) => [
  { name: "web_fetch", args: { url: str(input.url) ?? str(input.prompt) ?? "" } },
];
const webSearch: Mapper = (input) => [{ name: "web_search", args: { query: str(input.query) ?? "" } }];

/**
 * The files an `apply_patch` envelope touches: every `Add`/`Update`/`Delete File:` and
 * `Move to:` line, read more leniently than Codex's parser (leading blanks, any spacing,
 * any case, a carriage return), so no spelling Codex applies is missed.
 */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const line of patch.split(/\r?\n|\r/)) {
    const match = /^\s*\*\*\*\s*(?:(?:add|update|delete)\s+file|move\s+to)\s*:\s*(.+?)\s*$/i.exec(line);
    if (match) paths.push(match[1] as string);
  }
  return paths;
}

/** Whether a shell command carries a patch Codex would apply itself (`apply_patch <<'EOF' ... EOF`). */
const carriesPatch = (command: string): boolean => /\*\*\*\s*begin\s+patch/i.test(command);

const applyPatch: Mapper = (input) => {
  const patch = str(input.command) ?? str(input.patch) ?? str(input.input) ?? "";
  const paths = patchPaths(patch);
  // A patch Rein cannot read still has to be decided: as a write of nothing nameable.
  if (paths.length === 0) return [{ name: "write", args: { path: "", content: patch } }];
  return paths.map((path) => ({ name: "write", args: { path, content: patch } }));
};

const CLAUDE_CODE: Readonly<Record<string, Mapper>> = {
  Bash: bash,
  Read: read("file_path"),
  Write: write("file_path"),
  Edit: edit("file_path"),
  MultiEdit: multiEdit,
  NotebookEdit: (input) => [
    { name: "write", args: { path: str(input.notebook_path) ?? "", content: str(input.new_source) ?? "" } },
  ],
  Glob: find("path"),
  Grep: grep("path", "glob"),
  LS: ls("path"),
  WebFetch: webFetch,
  WebSearch: webSearch,
};

/**
 * Codex applies a patch given to its shell (`apply_patch <<'EOF'`, `["apply_patch", patch]`)
 * itself, without running a shell: the call is also a write of every file it touches.
 */
const codexShell: Mapper = (input) => {
  const calls = bash(input);
  const command = (calls[0] as ReinCall).args.command as string;
  if (!carriesPatch(command)) return calls;
  const cwd = (calls[0] as ReinCall).cwd;
  return [...calls, ...applyPatch({ command }).map((call) => (cwd !== undefined ? { ...call, cwd } : call))];
};

const CODEX: Readonly<Record<string, Mapper>> = {
  ...CLAUDE_CODE,
  // Codex 0.171's shell tools reach hooks as Bash; older names kept for older builds.
  Bash: codexShell,
  shell: codexShell,
  local_shell: codexShell,
  exec_command: codexShell,
  apply_patch: applyPatch,
};

const GEMINI: Readonly<Record<string, Mapper>> = {
  run_shell_command: bash,
  read_file: (input) =>
    read("file_path")({ ...input, file_path: str(input.file_path) ?? str(input.absolute_path) }),
  write_file: write("file_path"),
  replace: edit("file_path"),
  glob: (input) => find("path")({ ...input, path: str(input.dir_path) ?? str(input.path) }),
  grep_search: (input) =>
    grep(
      "path",
      "glob",
    )({
      ...input,
      path: str(input.dir_path) ?? str(input.path),
      glob: str(input.include_pattern) ?? str(input.include),
    }),
  search_file_content: (input) => grep("path", "glob")({ ...input, glob: str(input.include) }),
  list_directory: (input) => ls("path")({ path: str(input.dir_path) ?? str(input.path) }),
  // Every pattern it reads, under either name (`include` now, `paths` in older builds).
  read_many_files: (input) => {
    const include = [input.include, input.paths].flatMap((list) =>
      Array.isArray(list)
        ? list.filter((p): p is string => typeof p === "string")
        : typeof list === "string"
          ? [list]
          : [],
    );
    return include.length > 0
      ? include.map((pattern) => ({ name: "read", args: { path: pattern } }))
      : [{ name: "read", args: { path: "" } }];
  },
  web_fetch: webFetch,
  google_web_search: webSearch,
};

const TABLES: Readonly<Record<AgentName, Readonly<Record<string, Mapper>>>> = {
  "claude-code": CLAUDE_CODE,
  codex: CODEX,
  gemini: GEMINI,
};

/** The agent's tool names Rein maps (for the README and `rein hook install`'s matchers). */
export function mappedToolNames(agent: AgentName): string[] {
  return Object.keys(TABLES[agent]);
}

/** Input field names that name something a path or shell rule would decide on, at any depth. */
const UNCHECKED_KEY =
  /^(command|cmd|args?|argv|script|code|patch|input|url|uri|href|cwd|workdir|directory|source|src|dest(ination)?|target|to|from)$|path|file|dir|folder/i;

/** A string that reads as a path: absolute, home-relative, dot-relative, or with a separator and no blank. */
export const looksLikePath = (value: string): boolean =>
  /^(\/|~|\.\.?(\/|$))/.test(value) ||
  (/[\\/]/.test(value) && !/\s/.test(value) && !/^[a-z]+:\/\//i.test(value));

/** Every string leaf of an input, with the key it sits under (array items under their array's key). */
export function stringLeaves(value: unknown, key = "", depth = 0): { key: string; text: string }[] {
  if (typeof value === "string") return [{ key, text: value }];
  if (depth > 16 || typeof value !== "object" || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item) => stringLeaves(item, key, depth + 1));
  return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, k, depth + 1));
}

/** The input field (at any depth) that names a path or command Rein cannot check, or undefined. */
function uncheckedField(input: Args): string | undefined {
  const named = (value: unknown, depth: number): string | undefined => {
    if (depth > 16 || typeof value !== "object" || value === null) return undefined;
    for (const [key, leaf] of Array.isArray(value)
      ? value.map((v) => ["", v] as const)
      : Object.entries(value)) {
      if (key !== "" && UNCHECKED_KEY.test(key) && leaf !== undefined && leaf !== null) return key;
      const inner = named(leaf, depth + 1);
      if (inner !== undefined) return inner;
    }
    return undefined;
  };
  return named(input, 0) ?? stringLeaves(input).find((leaf) => looksLikePath(leaf.text))?.key;
}

/** Fields a mapped tool reads as text (a path, a command, a pattern): any other type is malformed. */
const TEXT_FIELDS = [
  "file_path",
  "path",
  "notebook_path",
  "dir_path",
  "absolute_path",
  "directory",
  "workdir",
  "url",
  "pattern",
  "glob",
  "include_pattern",
  "old_string",
  "new_string",
  "content",
  "new_source",
  "patch",
];

function malformedField(toolName: string, input: Args): string | undefined {
  for (const key of ["command", "cmd"])
    if (input[key] !== undefined && commandText(input[key]) === undefined) return key;
  for (const key of TEXT_FIELDS) {
    const value = input[key];
    if (value !== undefined && value !== null && typeof value !== "string") return key;
  }
  if (toolName === "MultiEdit" && input.edits !== undefined) {
    if (!Array.isArray(input.edits)) return "edits";
    if (input.edits.some((one) => typeof one !== "object" || one === null || Array.isArray(one)))
      return "edits";
    // A change naming its own file would be applied there, not to `file_path`.
    if (input.edits.some((one) => (one as Args).file_path !== undefined || (one as Args).path !== undefined))
      return "edits";
  }
  for (const key of ["include", "paths"]) {
    const value = input[key];
    if (toolName === "read_many_files" && value !== undefined && typeof value !== "string")
      if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) return key;
  }
  return undefined;
}

export function mapToolCall(
  agent: AgentName,
  toolName: string,
  input: Args,
  mcp?: { server: string; tool: string },
): MappedCall {
  const mapper = Object.hasOwn(TABLES[agent], toolName) ? TABLES[agent][toolName] : undefined;
  if (mapper) {
    const malformed = malformedField(toolName, input);
    return { calls: mapper(input), mapped: true, ...(malformed !== undefined ? { malformed } : {}) };
  }
  // MCP tools keep Rein's own naming, `mcp__<server>__<tool>` (Claude Code and Codex use it as is).
  const name =
    agent === "gemini" && mcp ? `mcp__${mcp.server}__${mcp.tool}`.replace(/[^A-Za-z0-9_-]/g, "_") : toolName;
  const mappedCall: MappedCall = { calls: [{ name, args: { ...input } }], mapped: name.startsWith("mcp__") };
  if (!mappedCall.mapped) {
    const field = uncheckedField(input);
    if (field !== undefined) mappedCall.unchecked = field;
  }
  return mappedCall;
}
