/**
 * The hook daemon's process entry (started detached by hook-client.ts). Before
 * anything else of Rein's loads, it starts recording every module file this
 * process loads (trust/module-gate.ts), so the daemon can re-check them all
 * before each decision (hook-daemon.ts).
 */
import { enableCompileCache } from "../compile-cache.js";
import { observeModules } from "../trust/module-gate.js";

const loaded: string[] = [];
observeModules((file) => loaded.push(file));
enableCompileCache();
const { runHookDaemon } = await import("./hook-daemon.js");
await runHookDaemon(process.argv.slice(2), loaded);
// Whatever a plugin left running (a timer, a socket), the daemon's life ends with its server.
process.exit(0);
