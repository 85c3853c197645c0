/**
 * Rein's first-party tool shapes for agent calls the project's stack has no
 * tool for: a project that configured only policy still gets `bash` calls
 * with the parsed command and `read` / `write` / `edit` calls with canonical
 * paths, exactly the facts @rein/tools-shell and @rein/tools-fs give their
 * gates, so the same rules decide the same way.
 *
 * Invariant: these tools never run (the agent runs its own tool); `execute`
 * refuses. A tool the project registers itself is used instead, with its own
 * `inspect` and options (a tool root, a sandbox).
 */
import { type AnyAgentTool, defineTool, type PathArgs, type ToolRisk, Type } from "@rein/sdk";

const never = () => {
  throw new Error("a stand-in tool for an agent hook never runs");
};

const OPEN = { additionalProperties: true } as const;

function pathTool(name: string, risk: ToolRisk, paths: PathArgs, required: string[]): AnyAgentTool {
  const properties = Object.fromEntries(required.map((key) => [key, Type.String()]));
  for (const key of Object.keys(paths))
    if (!required.includes(key)) properties[key] = Type.Optional(Type.String()) as never;
  return defineTool({
    name,
    description: `The agent's ${name} tool, decided by Rein (runs in the agent).`,
    parameters: Type.Object(properties, OPEN),
    paths,
    risk,
    execute: never,
  }) as AnyAgentTool;
}

function standIns(): AnyAgentTool[] {
  const bash = defineTool({
    name: "bash",
    description: "The agent's shell tool, decided by Rein (runs in the agent).",
    parameters: Type.Object({ command: Type.String() }, OPEN),
    risk: "exec",
    inspect: async (args: { command: string }) => ({
      command: await (await import("@rein/sdk/shell")).analyzeShell(args.command),
    }),
    execute: never,
  }) as AnyAgentTool;
  const network = (name: string, key: string) =>
    defineTool({
      name,
      description: `The agent's ${name} tool, decided by Rein (runs in the agent).`,
      parameters: Type.Object({ [key]: Type.String() }, OPEN),
      risk: "network",
      execute: never,
    }) as AnyAgentTool;
  return [
    bash,
    pathTool("read", "read", { path: "file" }, ["path"]),
    pathTool("write", "write", { path: "file" }, ["path"]),
    pathTool("edit", "write", { path: "file" }, ["path"]),
    pathTool("find", "read", { path: "walk" }, ["pattern"]),
    pathTool("grep", "read", { path: "walk" }, ["pattern"]),
    pathTool("ls", "read", { path: "walk" }, []),
    network("web_fetch", "url"),
    network("web_search", "query"),
  ];
}

/** The stand-ins for the tool names `registered` lacks. */
export function missingStandIns(registered: readonly AnyAgentTool[]): AnyAgentTool[] {
  const names = new Set(registered.map((tool) => tool.name));
  return standIns().filter((tool) => !names.has(tool.name));
}

/**
 * A tool Rein knows nothing of (an MCP tool, a tool not in the mapping), as the
 * context its result's taps (redaction) need: no risk, never runs.
 */
export function unknownToolStandIn(name: string): AnyAgentTool {
  return defineTool({
    name,
    description: `The agent's ${name} tool (unknown to Rein; runs in the agent).`,
    parameters: Type.Object({}, OPEN),
    execute: never,
  }) as AnyAgentTool;
}
