/**
 * The hook daemon's process entry (started detached by hook-client.ts). Before
 * anything else of Rein's loads, it starts recording every module file this
 * process loads (trust/module-gate.ts), so the daemon can re-check them all
 * before each decision (hook-daemon.ts). Like main.ts, an entry point: it parses
 * the command line with the CLI's own program, so flags mean what they mean to `rein`.
 */
import { observeModules } from "../trust/module-gate.js";

const loaded: string[] = [];
observeModules((file) => loaded.push(file));
const { runHookDaemon } = await import("./hook-daemon.js");
const { captureHookCommand } = await import("../commands/hook.js");
const { buildProgram, globalsFrom } = await import("../program.js");
type Parsed = Parameters<Parameters<typeof captureHookCommand>[0]>;
await runHookDaemon(process.argv.slice(2), loaded, async (argv) => {
  let parsed: { agentArg: Parsed[0]; options: Parsed[1]; globals: Parsed[2] } | undefined;
  captureHookCommand((agentArg, options, globals) => {
    parsed = { agentArg, options, globals };
  });
  const program = buildProgram(async (task) => {
    await task(globalsFrom(program));
  });
  await program.parseAsync(["node", "rein", ...argv]);
  return parsed;
});
// Whatever a plugin left running (a timer, a socket), the daemon's life ends with its server.
process.exit(0);
