/** `rein tools`: every registered tool, its risk, parameter schema and whether it is active. */
import { inspectionAgent } from "../agent/build-agent.js";
import { ExitCode } from "../errors.js";
import type { GlobalOptions } from "../program.js";
import { schemaType } from "../ui/schema-type.js";
import { terminal } from "../ui/terminal.js";

export async function toolsCommand(options: { json?: boolean }, globals: GlobalOptions): Promise<number> {
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
    if (options.json) {
      term.out.write(`${JSON.stringify(tools, null, 2)}\n`);
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
    return ExitCode.ok;
  } finally {
    await agent.dispose();
  }
}
