/**
 * Live reload for a chat: `/reload` on demand and, under `rein dev`, on every
 * change to the config's folder (config, local plugins and what they import).
 * Invariant: reloads never overlap a run or each other: a change during a turn is
 * applied when the turn ends (`settle()`), each reload after the previous one.
 */
import { type FSWatcher, watch } from "node:fs";
import type { ReinConfig } from "@rein/sdk";
import type { Terminal } from "../ui/terminal.js";
import type { Agent } from "./build-agent.js";
import { reloadAgent } from "./reload.js";

export interface LiveReload {
  /** Reloads now (between turns); reports the outcome on the terminal. */
  reload(): Promise<void>;
  /** Applies a change seen by the watcher, if any (call between turns). */
  settle(): Promise<void>;
  close(): void;
}

const IGNORED = /(^|[\\/])(node_modules|\.rein|\.git|dist|\.cache)([\\/]|$)/;
const DEBOUNCE_MS = 120;

export function liveReload(
  agent: Agent,
  where: { cwd: string; configPath?: string | undefined; flags?: ReinConfig | undefined },
  term: Terminal,
  options: { watch: boolean },
): LiveReload {
  let chain: Promise<void> = Promise.resolve();
  let pending = false;
  let timer: NodeJS.Timeout | undefined;
  const { c } = term;

  const runReload = () => {
    chain = chain.then(async () => {
      pending = false;
      try {
        const report = await reloadAgent(agent, where);
        term.err.write(
          `${c.green("↻ reloaded")}: ${report.plugins.length} plugin${report.plugins.length === 1 ? "" : "s"} (${report.plugins.join(", ") || "none"}), ${report.tools} tool${report.tools === 1 ? "" : "s"}\n`,
        );
        for (const { key, reason } of report.restart) {
          term.err.write(
            c.yellow(
              key === "model"
                ? "  the model changed in the config: restart to use it\n"
                : `  ${key} changed in the config: restart to use it (${reason})\n`,
            ),
          );
        }
      } catch (error) {
        term.err.write(
          `${c.red("✗ reload failed")}: ${(error as Error).message}\n  kept the previous plugins\n`,
        );
      }
    });
    return chain;
  };

  let watcher: FSWatcher | undefined;
  if (options.watch) {
    watcher = watch(agent.loaded.dir, { recursive: true }, (_event, name) => {
      if (name && IGNORED.test(String(name))) return;
      pending = true;
      clearTimeout(timer);
      timer = setTimeout(() => {
        if (pending && agent.harness.phase === "idle") void runReload();
      }, DEBOUNCE_MS);
    });
    term.err.write(
      c.dim(`watching ${agent.loaded.dir} for changes (config and plugins reload between turns)\n`),
    );
  }

  return {
    reload: runReload,
    async settle() {
      await chain;
      if (pending) await runReload();
    },
    close() {
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
