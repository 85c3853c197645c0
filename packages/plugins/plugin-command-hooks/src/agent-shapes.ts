/**
 * Rein's tool calls in the shape hook scripts expect: the names and input
 * fields Claude Code gives its hooks (`Bash` `{ command }`, `Read`
 * `{ file_path }`, `Edit` `{ file_path, old_string, new_string }`, ...), so a
 * script written for Claude Code (or Codex, which copies it) reads a Rein call
 * unchanged; and back, for a hook's `updatedInput`.
 *
 * Invariant: a path goes to the hook absolute (Claude Code's own tools send
 * absolute paths), resolved against the working directory; an update maps back
 * only fields the Rein tool has, and the harness validates the result again.
 */
import { isAbsolute, resolve } from "node:path";

export interface AgentCall {
  toolName: string;
  toolInput: Record<string, unknown>;
}

type Args = Record<string, unknown>;

interface Shape {
  agent: string;
  /** Rein argument -> agent input field. */
  fields: Readonly<Record<string, string>>;
  /** Rein arguments that are paths (sent absolute). */
  paths?: readonly string[];
}

const SHAPES: Readonly<Record<string, Shape>> = {
  bash: { agent: "Bash", fields: { command: "command" } },
  read: { agent: "Read", fields: { path: "file_path", offset: "offset", limit: "limit" }, paths: ["path"] },
  write: { agent: "Write", fields: { path: "file_path", content: "content" }, paths: ["path"] },
  edit: {
    agent: "Edit",
    fields: { path: "file_path", oldText: "old_string", newText: "new_string", replaceAll: "replace_all" },
    paths: ["path"],
  },
  find: { agent: "Glob", fields: { pattern: "pattern", path: "path" }, paths: ["path"] },
  grep: { agent: "Grep", fields: { pattern: "pattern", path: "path", glob: "glob" }, paths: ["path"] },
  ls: { agent: "LS", fields: { path: "path" }, paths: ["path"] },
};

/** The agent-side name of a Rein tool (`bash` -> `Bash`); others keep theirs (`mcp__server__tool`). */
export function agentToolName(reinName: string): string {
  return SHAPES[reinName]?.agent ?? reinName;
}

export function toAgentCall(reinName: string, args: Args, cwd: string): AgentCall {
  const shape = SHAPES[reinName];
  if (!shape) return { toolName: reinName, toolInput: { ...args } };
  const toolInput: Args = {};
  for (const [arg, field] of Object.entries(shape.fields)) {
    let value = args[arg];
    if (value === undefined) continue;
    if (shape.paths?.includes(arg) && typeof value === "string" && !isAbsolute(value))
      value = resolve(cwd, value);
    toolInput[field] = value;
  }
  return { toolName: shape.agent, toolInput };
}

/**
 * A hook's `updatedInput` as Rein arguments: agent fields mapped back (absolute
 * paths stay absolute: the tool resolves them), fields the shape does not know
 * refused. Claude Code replaces the whole input with `updatedInput`; so does this.
 */
export function fromAgentInput(reinName: string, updated: Args): { args: Args } | { problem: string } {
  const shape = SHAPES[reinName];
  if (!shape) return { args: { ...updated } };
  const back = new Map(Object.entries(shape.fields).map(([arg, field]) => [field, arg]));
  const args: Args = {};
  for (const [field, value] of Object.entries(updated)) {
    const arg = back.get(field);
    // Claude Code's tools take more fields than Rein's (a Bash `description`): dropped, they do not run anything.
    if (arg === undefined) {
      if (["description", "timeout", "run_in_background"].includes(field)) continue;
      return { problem: `has "${field}", which ${reinName} does not take` };
    }
    args[arg] = value;
  }
  return { args };
}
