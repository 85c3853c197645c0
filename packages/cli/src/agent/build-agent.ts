/**
 * Assembles a configured agent: config -> model -> session -> harness -> plugins.
 * Invariant: nothing is written before everything that can fail at load time
 * (config, model, plugin modules) has succeeded; a fresh session left empty by a
 * failing plugin setup is removed again.
 */
import {
  AgentHarness,
  type Durability,
  isHarnessError,
  MemoryStorage,
  Session,
  type SessionHeader,
  SessionStore,
  type StreamFunction,
} from "@rein/harness";
import {
  isInside,
  loadPlugins,
  type PluginHost,
  protectedFiles,
  type ReinConfig,
  reinCacheDir,
  type ScriptStep,
  stateFolders,
} from "@rein/sdk";
import { pluginLoadError } from "../config/entry-location.js";
import { userConfigDir } from "../config/layers.js";
import { type LoadedConfig, loadConfig } from "../config/load-config.js";
import { type ResolvedModel, resolveModel } from "../config/resolve-model.js";
import { type ResolvedEntry, resolvePlugins } from "../config/resolve-plugins.js";
import { whereWritten } from "../config/value-origin.js";
import { CliError, configError, sessionInUse, sessionNotFound } from "../errors.js";
import { attachSkills, withSkillCatalog } from "../skills/attach-skills.js";
import { findSkills } from "../skills/skill-sources.js";
import { harnessOptions } from "./config-wiring.js";
import { type ProjectInstructions, projectInstructions } from "./project-instructions.js";
import { refreshTemplates } from "./prompt-templates.js";
import { perRequestSignal } from "./request-signal.js";
import { scriptRepliesGiven } from "./script-resume.js";
import { type SessionBackendPort, sessionBackend, sessionDir } from "./session-backend.js";

export interface AgentOptions {
  cwd: string;
  /** Where the config is found from, when not `cwd` (a hook pinned to its project, hook/pinned-project.ts). */
  configCwd?: string;
  configPath?: string | undefined;
  /** Resume this session (id or unique prefix). */
  sessionId?: string | undefined;
  /** Resume the latest session. */
  continueLatest?: boolean;
  /** Use an in-memory session (nothing written): `plugins`, `tools`, `replay`, `doctor`. */
  ephemeral?: boolean;
  script?: ScriptStep[] | undefined;
  /** Checks that need the config and must fail before anything is written (a `/template` or `/skill` name). */
  check?: (loaded: LoadedConfig, plugins: readonly ResolvedEntry[]) => void;
  /** Where project-instruction warnings go (default: nowhere). */
  warn?: (message: string) => void;
  /** Let commands that only inspect run without a model. */
  modelOptional?: boolean;
  /** The command-line config layer (`--model`, `--allow`, ...; see config/cli-flags.ts). */
  flags?: ReinConfig | undefined;
  /** The in-memory session's header (`rein replay` replays under the recorded session's id). */
  ephemeralHeader?: SessionHeader;
  /** Replaces the provider stream (`rein replay` serves the recorded replies). */
  streamFn?: StreamFunction;
  /** A PostgreSQL session lock's lease in ms (`rein worker --lease`; see @rein/store-postgres). */
  leaseMs?: number;
  /** When the session reaches the disk (default `save-point`; `rein mcp serve` uses `group`). */
  durability?: Durability;
  /**
   * A JSONL session fsyncs on the thread pool, not on the event loop (same fsync points,
   * awaited where they were waited for): `rein worker`, where many runs share one loop.
   */
  syncOffThread?: boolean;
  /**
   * What many agents of one process share (`rein worker`, worker/worker-stack.ts): the
   * config, model, plugins and session store are taken from here, not loaded again.
   */
  shared?: SharedStack;
}

/**
 * The part of an agent that does not depend on its session: built once, used by many.
 * Never in it: the harness, the session, plugin setup (each agent runs it on its own
 * harness), a scripted model (its replies are consumed per session: `model` absent).
 */
export interface SharedStack {
  loaded: LoadedConfig;
  plugins: ResolvedEntry[];
  sessions: SessionBackendPort;
  /** The resolved model; absent for a scripted model, which every agent resolves for itself. */
  model?: ResolvedModel;
}

export interface Agent {
  harness: AgentHarness;
  host: PluginHost;
  session: Session;
  /** The JSONL directory store (`session.dir`), whatever `session.store` says. */
  store: SessionStore;
  /** Where sessions live as configured: JSONL or PostgreSQL. */
  sessions: SessionBackendPort;
  loaded: LoadedConfig;
  model: ResolvedModel;
  plugins: ResolvedEntry[];
  /** AGENTS.md files in the system prompt (see project-instructions.ts). */
  instructions: ProjectInstructions;
  /**
   * Switches the model between runs (`/model`): the harness's model and request
   * options, and the collection requests go through (the provider, its credentials).
   */
  setModel(resolved: ResolvedModel): void;
  /** Disposes plugins, closes the session and the scripted model. */
  dispose(): Promise<void>;
}

export function sessionStore(loaded: LoadedConfig): SessionStore {
  return new SessionStore(sessionDir(loaded));
}

/**
 * The session dir as Rein state to protect, unless it holds the project or the working
 * directory (`session.dir: "."`): protecting it would lock the project itself.
 */
function stateSessionDir(loaded: LoadedConfig, cwd: string): string[] {
  const dir = sessionDir(loaded);
  return isInside(dir, loaded.dir) || isInside(dir, cwd) ? [] : [dir];
}

export async function buildAgent(options: AgentOptions): Promise<Agent> {
  const { shared } = options;
  const loaded =
    shared?.loaded ??
    (await loadConfig({
      cwd: options.configCwd ?? options.cwd,
      configPath: options.configPath,
      flags: options.flags,
    }));
  // A shared model's request options are copied: the harness may change its own.
  const model: ResolvedModel = shared?.model
    ? { ...shared.model, requestOptions: { ...shared.model.requestOptions } }
    : await resolveAgentModel(loaded, options);
  const plugins = shared?.plugins ?? (await resolvePlugins(loaded));
  options.check?.(loaded, plugins);
  const store = sessionStore(loaded);
  const sessions =
    shared?.sessions ??
    (await sessionBackend(loaded, options.leaseMs, options.syncOffThread ? { syncOffThread: true } : {}));
  let session: Session;
  let fresh = false;
  if (options.ephemeral) {
    session = Session.create(new MemoryStorage(options.ephemeralHeader));
  } else if (options.sessionId) {
    const id = options.sessionId;
    session = await openSession(() => sessions.open(id), `session "${id}"`);
  } else {
    const latest = options.continueLatest
      ? await openSession(() => sessions.openLatest(), "the latest session")
      : undefined;
    session = latest ?? (await openSession(() => sessions.create({ cwd: options.cwd }), "a new session"));
    fresh = latest === undefined;
  }
  // A resumed run on the config's script goes on after the replies its session already
  // holds; replies given with --script are new ones, used from their first.
  if (model.scripted && !fresh && options.script === undefined)
    model.scripted.skip(scriptRepliesGiven(session, model.scripted));
  const { config } = loaded;
  /** The agent once built: a reload replaces its `loaded` config. */
  let built: Agent | undefined;
  const instructions = projectInstructions({
    root: loaded.dir,
    cwd: options.cwd,
    base: config.systemPrompt ?? "",
    warn: options.warn ?? (() => undefined),
    enabled: config.instructions?.enabled !== false,
  });
  const route = { models: model.models };
  const harness = new AgentHarness({
    session,
    model: model.model,
    cwd: options.cwd,
    durability: options.durability ?? "save-point",
    requestOptions: model.requestOptions,
    models: model.models,
    // Through `route`, so `agent.setModel` can switch the provider between requests.
    streamFn: options.streamFn ?? perRequestSignal(() => route.models),
    // The skills catalog follows the instructions; its budget is the config's of the moment (reloads).
    systemPrompt: withSkillCatalog(
      instructions.systemPrompt,
      () => (built?.loaded ?? loaded).config.skills?.budgetTokens,
    ),
    // retry, thinkingLevel, compaction, decisions, approvals: as the config wiring says.
    ...harnessOptions(config),
  });
  // Rein's own config (every layer, the local one even before it exists: grants go
  // there) and plugin code are out of the file tools' reach (security invariant 4).
  protectedFiles(harness).add(
    "rein",
    [
      ...Object.values(loaded.files),
      // The user's config dir: the grant key and the trust records live there.
      userConfigDir(),
      // Rein's cache: transpiled config files and plugins, run at the next start.
      reinCacheDir(),
      // The sessions (grants are read back from them), wherever `session.dir` puts them.
      ...stateSessionDir(loaded, options.cwd),
      ...loaded.layers.map((layer) => layer.file),
      ...plugins.map((p) => p.file),
      // Every module of the project the trust record holds: plugins and all they import.
      ...loaded.trust.files(),
    ].flatMap((file) => (file ? [file] : [])),
  );
  // The shell's sandbox knows the config and cache dirs and `.rein/`, not where this config keeps sessions.
  stateFolders(harness).add("rein", stateSessionDir(loaded, options.cwd));
  let host: PluginHost;
  try {
    host = await loadPlugins(
      harness,
      plugins.map((p) => p.entry),
    );
    // Skills are text (read, never run): a bad one is a warning line, and is skipped.
    const skills = findSkills(loaded, plugins);
    for (const line of skills.problems) options.warn?.(line);
    const clash = attachSkills(harness, skills.skills);
    if (clash) options.warn?.(clash);
    refreshTemplates(harness, loaded.dir);
    if (config.tools?.active) {
      try {
        harness.setActiveTools(config.tools.active);
      } catch (error) {
        // Reported where the list was written: the layer that set tools.active.
        throw configError(`tools.active: ${(error as Error).message}`, whereWritten(loaded, "tools.active"));
      }
    }
  } catch (error) {
    if (fresh && session.entries().length === 0) await sessions.discard(session);
    else await session.close();
    model.scripted?.dispose();
    if (error instanceof CliError) throw error;
    throw pluginLoadError(loaded, plugins, error);
  }
  // Plugin setup may import more of the project: a recording run keeps it too.
  loaded.trust.save();
  const unwatch = instructions.watch(harness, session.branch());
  const agent: Agent = {
    harness,
    host,
    session,
    store,
    sessions,
    loaded,
    model,
    plugins,
    instructions,
    setModel(resolved) {
      harness.setModel(resolved.model);
      harness.setRequestOptions(resolved.requestOptions);
      route.models = resolved.models;
      agent.model = resolved;
    },
    async dispose() {
      unwatch();
      try {
        await harness.close(2_000);
        // The current host: a reload (agent/reload.ts) may have replaced it.
        await agent.host.dispose();
      } finally {
        await session.close();
        model.scripted?.dispose();
        // A project grant Rein wrote to the local layer during the run is Rein's own change.
        if (loaded.trust.mode === "record") loaded.trust.save();
        else loaded.trust.refreshLocal();
      }
    },
  };
  built = agent;
  return agent;
}

/** Opens an existing session; a lock held by a live run is a one-line `session` error (exit 2). */
async function openSession<T>(open: () => Promise<T>, what: string): Promise<T> {
  try {
    return await open();
  } catch (error) {
    if (isHarnessError(error, "session_in_use")) throw sessionInUse(error.message, error);
    if (error instanceof CliError && error.code === "database") throw error; // the store is unusable, not the session
    throw sessionNotFound(`cannot open ${what}: ${(error as Error).message}`, error);
  }
}

async function resolveAgentModel(loaded: LoadedConfig, options: AgentOptions): Promise<ResolvedModel> {
  const modelAt = whereWritten(loaded, "model");
  if (!options.modelOptional) return resolveModel(loaded.config, { script: options.script, modelAt });
  // Inspection commands run the stack without calling a model: a missing model or
  // credential must not stop them, so a scripted stand-in takes its place.
  try {
    return await resolveModel(loaded.config, { script: options.script, modelAt });
  } catch {
    return resolveModel({ model: { script: [] } });
  }
}

/**
 * The configured stack for inspection (`plugins`, `tools`, `replay`, `doctor`):
 * an in-memory session, so nothing is written, and no model or credential needed.
 */
export function inspectionAgent(where: { cwd: string; config?: string | undefined }): Promise<Agent> {
  return buildAgent({ cwd: where.cwd, configPath: where.config, ephemeral: true, modelOptional: true });
}
