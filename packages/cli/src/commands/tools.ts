/** `rein tools`: every registered tool, its risk, parameter schema and whether it is active. */
import { inspectionAgent } from "../agent/build-agent.js";
import { ExitCode } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { describeServer, mcpServers } from "../mcp/mcp-status.js";
import { type JsonOut, reserveStdout } from "../ui/json-stdout.js";
import { schemaType } from "../ui/schema-type.js";
import { terminal } from "../ui/terminal.js";

export async function toolsCommand(options: { json?: boolean }, globals: GlobalOptions): Promise<number> {
  // Reserved before plugins load: their console output goes to stderr, stdout stays one JSON document.
  const json = options.json ? reserveStdout() : undefined;
  try {
    return await listTools(json, globals);
  } finally {
    json?.release();
  }
}

async function listTools(json: JsonOut | undefined, globals: GlobalOptions): Promise<number> {
  const agent = await inspectionAgent(globals);
  const term = terminal();
  try {
    const active = new Set(agent.harness.activeToolNames);
    const tools = agent.harness.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      risk: tool.risk ?? null,
      active: active.has(tool.name),
      owner: tool.owner ?? null,
      parameters: JSON.parse(JSON.stringify(tool.parameters)) as unknown,
    }));
    const servers = mcpServers(agent.session.entries());
    if (json) {
      json.write(`${JSON.stringify(tools, null, 2)}\n`);
      for (const server of servers.filter((s) => s.state !== "ready")) {
        term.err.write(`mcp server ${describeServer(server).line}: ${server.reason ?? ""}\n`);
      }
      return ExitCode.ok;
    }
    if (tools.length === 0) term.err.write("no tools registered (add a tool pack to plugins)\n");
    const { co } = term;
    for (const tool of tools) {
      const state = tool.active ? co.green("active") : co.dim("inactive");
      term.out.write(
        `${co.bold(tool.name)}  ${state}  risk ${tool.risk ?? "-"}${tool.owner ? co.dim(`  from ${tool.owner}`) : ""}\n`,
      );
      term.out.write(`  ${tool.description.split("\n")[0]}\n`);
      const properties =
        (tool.parameters as { properties?: Record<string, { description?: string }> }).properties ?? {};
      const required = new Set((tool.parameters as { required?: string[] }).required ?? []);
      for (const [name, schema] of Object.entries(properties)) {
        term.out.write(
          `    ${name}${required.has(name) ? "" : "?"}: ${schemaType(schema)}${schema.description ? co.dim(`  ${schema.description}`) : ""}\n`,
        );
      }
    }
    if (servers.length > 0) term.out.write(`\n${co.bold("MCP servers")}\n`);
    for (const server of servers) {
      const { ok, line, reason } = describeServer(server);
      term.out.write(`  ${ok ? co.green("✓") : co.red("✗")} ${line}\n`);
      if (reason) term.out.write(`${reason.replace(/^/gm, "      ")}\n`);
    }
    return ExitCode.ok;
  } finally {
    await agent.dispose();
  }
}
