/** `rein plugins`: what the configured stack loads, without running anything. */
import { inspectionAgent } from "../agent/build-agent.js";
import { displayName } from "../agent/plugin-failure.js";
import { ExitCode } from "../errors.js";
import type { GlobalOptions } from "../globals.js";
import { reserveStdout } from "../ui/json-stdout.js";
import { terminal } from "../ui/terminal.js";

export async function pluginsCommand(options: { json?: boolean }, globals: GlobalOptions): Promise<number> {
  // Reserved before plugins load: their console output goes to stderr, stdout stays one JSON document.
  const json = options.json ? reserveStdout() : undefined;
  try {
    const agent = await inspectionAgent(globals);
    const term = terminal();
    try {
      const plugins = agent.host.plugins.map((plugin, index) => {
        const entry = agent.plugins[index];
        return {
          ...plugin,
          ...(entry && plugin.kind === "tool-pack" ? { name: displayName(entry, index) } : {}),
          source: entry?.source ?? "inline",
        };
      });
      if (json) {
        json.write(`${JSON.stringify(plugins, null, 2)}\n`);
        return ExitCode.ok;
      }
      if (plugins.length === 0) term.err.write("no plugins configured\n");
      const { co } = term;
      for (const plugin of plugins) {
        const from = plugin.source === plugin.name ? plugin.kind : `${plugin.kind}, ${plugin.source}`;
        term.out.write(
          `${co.bold(plugin.name)}${plugin.version ? co.dim(`@${plugin.version}`) : ""}  ${co.dim(`(${from})`)}\n`,
        );
        // Stage 0 is the default stage; it is shown all the same (the order of taps depends on it).
        for (const tap of plugin.taps) term.out.write(`  taps ${tap.hook} stage ${tap.stage}\n`);
        if (plugin.tools.length > 0) term.out.write(`  tools ${plugin.tools.join(", ")}\n`);
        if (plugin.rules.length > 0) term.out.write(`  rules ${plugin.rules.join(", ")}\n`);
        if (plugin.listeners > 0) term.out.write(`  listens to ${plugin.listeners} event subscription(s)\n`);
      }
      return ExitCode.ok;
    } finally {
      await agent.dispose();
    }
  } finally {
    json?.release();
  }
}
