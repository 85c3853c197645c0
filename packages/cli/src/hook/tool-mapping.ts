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
}

export interface MappedCall {
  /** The Rein calls that stand for the agent's call (at least one). */
  calls: ReinCall[];
  /** `false`: the agent's tool is not in the table. */
  mapped: boolean;
  /** For an unmapped tool: the input field that names a path or command Rein cannot check. */
  unchecked?: string;
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

const bash: Mapper = (input) => [{ name: "bash", args: { command: str(input.command) ?? "" } }];
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

/** The files an `apply_patch` envelope touches: every `Add`/`Update`/`Delete File:` and `Move to:` line. */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const line of patch.split(/\r?\n/)) {
    const match = /^\*\*\* (?:(?:Add|Update|Delete) File|Move to): (.+)$/.exec(line);
    if (match) paths.push((match[1] as string).trim());
  }
  return paths;
}

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

const CODEX: Readonly<Record<string, Mapper>> = {
  ...CLAUDE_CODE,
  // Codex 0.171's shell tools reach hooks as Bash; older names kept for older builds.
  shell: bash,
  exec_command: (input) => bash({ command: str(input.cmd) ?? str(input.command) }),
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
  read_many_files: (input) => {
    const include = Array.isArray(input.include) ? input.include.filter((p) => typeof p === "string") : [];
    return include.length > 0
      ? include.map((pattern) => ({ name: "read", args: { path: pattern as string } }))
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

/** Input fields that name something a path or shell rule would decide on. */
const UNCHECKED_FIELDS = [
  "command",
  "cmd",
  "file_path",
  "path",
  "paths",
  "notebook_path",
  "dir_path",
  "absolute_path",
  "url",
];

export function mapToolCall(
  agent: AgentName,
  toolName: string,
  input: Args,
  mcp?: { server: string; tool: string },
): MappedCall {
  const mapper = Object.hasOwn(TABLES[agent], toolName) ? TABLES[agent][toolName] : undefined;
  if (mapper) return { calls: mapper(input), mapped: true };
  // MCP tools keep Rein's own naming, `mcp__<server>__<tool>` (Claude Code and Codex use it as is).
  const name =
    agent === "gemini" && mcp ? `mcp__${mcp.server}__${mcp.tool}`.replace(/[^A-Za-z0-9_-]/g, "_") : toolName;
  const mappedCall: MappedCall = { calls: [{ name, args: { ...input } }], mapped: name.startsWith("mcp__") };
  if (!mappedCall.mapped) {
    const field = UNCHECKED_FIELDS.find((key) => input[key] !== undefined);
    if (field !== undefined) mappedCall.unchecked = field;
  }
  return mappedCall;
}
