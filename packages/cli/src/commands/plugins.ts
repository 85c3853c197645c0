/** `rein plugins` and `rein tools`: what the configured stack loads, without running anything. */
import { inspectionAgent } from "../agent/build-agent.js";
import { ExitCode } from "../errors.js";
import type { GlobalOptions } from "../program.js";
import { terminal } from "../ui/terminal.js";

export async function pluginsCommand(options: { json?: boolean }, globals: GlobalOptions): Promise<number> {
  const agent = await inspectionAgent(globals);
  const term = terminal();
  try {
    const plugins = agent.host.plugins.map((plugin, index) => ({
      ...plugin,
      source: agent.plugins[index]?.source ?? "inline",
    }));
    if (options.json) {
      term.out.write(`${JSON.stringify(plugins, null, 2)}\n`);
      return ExitCode.ok;
    }
    if (plugins.length === 0) term.err.write("no plugins configured\n");
    const { co } = term;
    for (const plugin of plugins) {
      term.out.write(
        `${co.bold(plugin.name)}${plugin.version ? co.dim(`@${plugin.version}`) : ""}  ${co.dim(`(${plugin.kind}, ${plugin.source})`)}\n`,
      );
      for (const tap of plugin.taps)
        term.out.write(`  taps ${tap.hook}${tap.stage ? ` stage ${tap.stage}` : ""}\n`);
      if (plugin.tools.length > 0) term.out.write(`  tools ${plugin.tools.join(", ")}\n`);
      if (plugin.listeners > 0) term.out.write(`  listens to ${plugin.listeners} event subscription(s)\n`);
    }
    return ExitCode.ok;
  } finally {
    await agent.dispose();
  }
}
