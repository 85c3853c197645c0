/**
 * Assembles a configured agent: config -> model -> session -> harness -> plugins.
 * Invariant: nothing is written before everything that can fail at load time
 * (config, model, plugin modules) has succeeded; a fresh session left empty by a
 * failing plugin setup is removed again.
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { AgentHarness, isHarnessError, MemoryStorage, Session, SessionStore } from "@rein/harness";
import { loadPlugins, type PluginHost, protectedFiles, type ScriptStep } from "@rein/sdk";
import { pluginLoadError } from "../config/entry-location.js";
import { type LoadedConfig, loadConfig } from "../config/load-config.js";
import { type ResolvedModel, resolveModel } from "../config/resolve-model.js";
import { type ResolvedEntry, resolvePlugins } from "../config/resolve-plugins.js";
import { lineOfKey } from "../config/validate-config.js";
import { CliError, configError, sessionInUse, sessionNotFound } from "../errors.js";
import { perRequestSignal } from "./request-signal.js";
import { scriptRepliesGiven } from "./script-resume.js";

export interface AgentOptions {
  cwd: string;
  configPath?: string | undefined;
  /** Resume this session (id or unique prefix). */
  sessionId?: string | undefined;
  /** Resume the latest session. */
  continueLatest?: boolean;
  /** Use an in-memory session (nothing written): `plugins`, `tools`, `replay`, `doctor`. */
  ephemeral?: boolean;
  script?: ScriptStep[] | undefined;
  /** Let commands that only inspect run without a model. */
  modelOptional?: boolean;
}

export interface Agent {
  harness: AgentHarness;
  host: PluginHost;
  session: Session;
  store: SessionStore;
  loaded: LoadedConfig;
  model: ResolvedModel;
  plugins: ResolvedEntry[];
  /** Disposes plugins, closes the session and the scripted model. */
  dispose(): Promise<void>;
}

export function sessionStore(loaded: LoadedConfig): SessionStore {
  return new SessionStore(resolve(loaded.dir, loaded.config.session?.dir ?? ".rein/sessions"));
}

export async function buildAgent(options: AgentOptions): Promise<Agent> {
  const loaded = await loadConfig({ cwd: options.cwd, configPath: options.configPath });
  const model = resolveAgentModel(loaded, options);
  const plugins = await resolvePlugins(loaded);
  const store = sessionStore(loaded);
  let session: Session;
  let fresh = false;
  if (options.ephemeral) {
    session = Session.create(new MemoryStorage());
  } else if (options.sessionId) {
    const id = options.sessionId;
    session = openSession(() => store.open(id), `session "${id}"`);
  } else {
    const latest = options.continueLatest
      ? openSession(() => store.openLatest(), "the latest session")
      : undefined;
    session = latest ?? store.create({ cwd: options.cwd });
    fresh = latest === undefined;
  }
  // A resumed scripted run goes on after the replies its session already holds.
  if (model.scripted && !fresh) model.scripted.skip(scriptRepliesGiven(session, model.scripted));
  const { config } = loaded;
  const harness = new AgentHarness({
    session,
    model: model.model,
    cwd: options.cwd,
    durability: "save-point",
    requestOptions: model.requestOptions,
    streamFn: perRequestSignal(),
    ...(config.retry !== undefined ? { retry: config.retry } : {}),
    ...(config.systemPrompt !== undefined ? { systemPrompt: config.systemPrompt } : {}),
    ...(config.thinkingLevel !== undefined ? { thinkingLevel: config.thinkingLevel } : {}),
    ...(config.compaction !== undefined ? { compaction: config.compaction } : {}),
    ...(config.approvals?.park === true ? { onUnanswered: "park" as const } : {}),
  });
  // Rein's own config and plugin code are out of the file tools' reach (security invariant 4).
  protectedFiles(harness).add(
    "rein",
    [loaded.file, ...plugins.map((p) => p.file)].flatMap((file) => (file ? [file] : [])),
  );
  let host: PluginHost;
  try {
    host = await loadPlugins(
      harness,
      plugins.map((p) => p.entry),
    );
    if (config.tools?.active) {
      try {
        harness.setActiveTools(config.tools.active);
      } catch (error) {
        const line = lineOfKey(loaded.text, "active");
        throw configError(`tools.active: ${(error as Error).message}`, {
          ...(loaded.file ? { file: loaded.file } : {}),
          ...(line ? { line } : {}),
        });
      }
    }
  } catch (error) {
    const removable = fresh && session.entries().length === 0 && session.storage.path;
    session.close();
    if (removable) rmSync(removable, { force: true });
    model.scripted?.dispose();
    if (error instanceof CliError) throw error;
    throw pluginLoadError(loaded, plugins, error);
  }
  const agent: Agent = {
    harness,
    host,
    session,
    store,
    loaded,
    model,
    plugins,
    async dispose() {
      try {
        await harness.close(2_000);
        // The current host: a reload (agent/reload.ts) may have replaced it.
        await agent.host.dispose();
      } finally {
        session.close();
        model.scripted?.dispose();
      }
    },
  };
  return agent;
}

/** Opens an existing session; a lock held by a live run is a one-line `session` error (exit 2). */
function openSession<T>(open: () => T, what: string): T {
  try {
    return open();
  } catch (error) {
    if (isHarnessError(error, "session_in_use")) throw sessionInUse(error.message, error);
    throw sessionNotFound(`cannot open ${what}: ${(error as Error).message}`, error);
  }
}

function resolveAgentModel(loaded: LoadedConfig, options: AgentOptions): ResolvedModel {
  if (!options.modelOptional) return resolveModel(loaded.config, { script: options.script });
  // Inspection commands run the stack without calling a model: a missing model or
  // credential must not stop them, so a scripted stand-in takes its place.
  try {
    return resolveModel(loaded.config, { script: options.script });
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
