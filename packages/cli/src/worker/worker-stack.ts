/**
 * What a worker's runs share: everything that does not depend on the job, built once
 * per process and handed to every run (`buildAgent({ shared })`): the loaded config
 * (every layer, the trust check it ran under), the resolved model (its provider
 * collection and client), the resolved plugins (their modules), the session store.
 * What belongs to one session is never shared: each run builds its own harness,
 * session, plugin setup (guard counters, grants, budgets live there), skills and
 * templates; a scripted model (its replies are consumed per session) is resolved per run.
 *
 * Invariant (reload): a run starts on a stack whose files are as they were when it was
 * built. Before each job the stack's files are re-checked by identity (`stat`: device,
 * inode, size, modification and change time; watched-files.ts): the config layers, every
 * config name that would change which config is found, the trust record and the grant
 * key, the plugins' files and every project module loaded since (outside Rein's own
 * installation). On any difference the job builds a new stack with a fresh module
 * loader (config and plugins evaluated again, the trust check run again); runs in
 * flight keep the stack they started on. A new stack that fails to build fails that job
 * (it is sent back to the queue); a worker never falls back to the old stack, and the
 * next job tries again. Concurrent jobs wait on one build.
 */
import { sep } from "node:path";
import type { SharedStack } from "../agent/build-agent.js";
import { sessionBackend } from "../agent/session-backend.js";
import { loadConfig } from "../config/load-config.js";
import { resolveModel } from "../config/resolve-model.js";
import { resolvePlugins } from "../config/resolve-plugins.js";
import { stackFiles } from "../config/stack-files.js";
import { whereWritten } from "../config/value-origin.js";
import { WatchedFiles } from "../hook/watched-files.js";
import { installRoot, reinPackages } from "../trust/install-root.js";
import { observeModules } from "../trust/module-gate.js";

export interface StackWhere {
  cwd: string;
  configPath: string | undefined;
  /** The PostgreSQL session lock's lease in ms (`--lease`). */
  leaseMs?: number;
  /** PostgreSQL session locks: at most this many shared connections hold them all (see worker.ts). */
  lockConnections?: number;
  env?: NodeJS.ProcessEnv;
}

interface Built {
  stack: SharedStack;
  watched: WatchedFiles;
}

const inside = (dir: string, file: string) =>
  file === dir || file.startsWith(dir.endsWith(sep) ? dir : dir + sep);

export class WorkerStack {
  readonly #where: StackWhere;
  #current: Built | undefined;
  #building: Promise<Built> | undefined;
  /** Builds so far (the first one included). */
  #builds = 0;

  constructor(where: StackWhere) {
    this.#where = where;
  }

  /** How many stacks this process built (1 when the files never changed). */
  get builds(): number {
    return this.#builds;
  }

  /** The stack for the next run: the current one, or a new one when a file it rests on changed. */
  async get(): Promise<SharedStack> {
    const current = this.#current;
    if (current !== undefined && current.watched.changed() === undefined) return current.stack;
    this.#building ??= this.#build(current !== undefined).finally(() => {
      this.#building = undefined;
    });
    return (await this.#building).stack;
  }

  async #build(fresh: boolean): Promise<Built> {
    const where = this.#where;
    const env = where.env ?? process.env;
    const rein = installRoot();
    const installed = reinPackages();
    /** Modules loaded while this stack is built and used (plugins importing lazily), as they load. */
    const loaded: string[] = [];
    let project: string | undefined;
    // Project code is watched; Rein's own installation (a thousand files) is not.
    const isRein = (file: string) =>
      installed.some((dir) => inside(dir, file)) ||
      (inside(rein, file) && (project === undefined || !inside(project, file)));
    let watched: WatchedFiles | undefined;
    const watch = (file: string) => {
      if (!isRein(file)) watched?.add(file);
    };
    const stopObserving = observeModules((file) => {
      loaded.push(file);
      watch(file);
    });
    try {
      const config = await loadConfig({
        cwd: where.cwd,
        configPath: where.configPath,
        ...(fresh ? { fresh: true } : {}),
        env,
        askTrust: false,
      });
      project = config.trust.project;
      // Every file here is checked before each job (none is Rein's: `watch` leaves those out).
      watched = new WatchedFiles(() => false);
      const files = [...stackFiles(config, where.cwd, where.configPath !== undefined, env), ...loaded];
      for (const file of files) watch(file);
      const scripted = typeof config.config.model === "object" && config.config.model.script !== undefined;
      const model = scripted
        ? undefined
        : await resolveModel(config.config, { modelAt: whereWritten(config, "model") });
      const plugins = await resolvePlugins(config);
      for (const plugin of plugins) if (plugin.file) watch(plugin.file);
      const sessions = await sessionBackend(config, where.leaseMs, {
        syncOffThread: true,
        ...(where.lockConnections === undefined ? {} : { lockConnections: where.lockConnections }),
      });
      const built: Built = {
        stack: { loaded: config, plugins, sessions, ...(model ? { model } : {}) },
        watched,
      };
      this.#builds++;
      // The previous stack's observer (if any) stops: its runs keep their stack as built.
      this.#stopObserving?.();
      this.#stopObserving = stopObserving;
      this.#current = built;
      return built;
    } catch (error) {
      stopObserving();
      throw error;
    }
  }

  #stopObserving: (() => void) | undefined;

  /**
   * The worker is stopping (its runs have ended): stops watching module loads and ends
   * the store's shared lock connections, which would otherwise keep the process alive.
   */
  async close(): Promise<void> {
    this.#stopObserving?.();
    this.#stopObserving = undefined;
    await this.#current?.stack.sessions.close();
  }
}
