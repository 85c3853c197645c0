/**
 * Loads the 30 plugin fixtures once, in a fresh process, the way each host does.
 *
 *   node startup-worker.mjs rein <project>   # @rein/cli buildAgent(): config + plugin modules + setups
 *   node startup-worker.mjs pi <project>     # pi's discoverAndLoadExtensions(): .pi/extensions/*.ts
 *   node startup-worker.mjs transpile-sucrase|transpile-babel <project>   # the compiler alone (below)
 *
 * The transpile cache is the parent's business: it sets REIN_CACHE_DIR (Rein) and
 * TMPDIR (pi's jiti caches in `os.tmpdir()/jiti`) to a fresh folder for a cold
 * run and reuses it for the warm one. Prints one JSON line:
 * `{ ms, cpuMs, importMs, totalMs, plugins, tools, maxRssMiB }`; `ms` times only the
 * loader call (`cpuMs`: the CPU time it took), `importMs` the host's own imports before it (untimed in `ms`),
 * `totalMs` process start to loaded.
 */
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { now } from "./stats.mjs";

const [impl, project] = process.argv.slice(2);
/** The timed loader call on the monotonic clock (ms), to cut a `--cpu-prof` profile to it. */
let window;

/** @rein/cli's library entry, built by `tsc -b` (imported by path: the bench does not depend on the CLI package). */
export const REIN_CLI = fileURLToPath(new URL("../../packages/cli/dist/index.js", import.meta.url));

/** pi's extension loader module (`loadExtensions`, `discoverAndLoadExtensions`): not part of the package's exports map. */
function piLoaderUrl() {
  return new URL("./core/extensions/loader.js", import.meta.resolve("@earendil-works/pi-coding-agent")).href;
}

async function loadRein() {
  const started = now();
  const cli = await import(REIN_CLI);
  const importMs = now() - started;
  const start = now();
  const cpu = process.cpuUsage();
  const agent = await cli.buildAgent({ cwd: project, ephemeral: true, modelOptional: true });
  const ms = now() - start;
  const cpuMs = cpuSince(cpu);
  window = [start, start + ms];
  const plugins = agent.plugins.length;
  const tools = agent.harness.tools.length;
  await agent.dispose();
  return { ms, cpuMs, importMs, plugins, tools };
}

/** CPU time (user + system, ms) since a `process.cpuUsage()` reading: less swayed by other processes than wall time. */
function cpuSince(start) {
  const { user, system } = process.cpuUsage(start);
  return (user + system) / 1000;
}

async function loadPi() {
  // An empty agent folder, so the user's own ~/.pi extensions stay out of it.
  const agentDir = fs.mkdtempSync(path.join(process.env.TMPDIR ?? "/tmp", "pi-agent-"));
  const started = now();
  const loader = await import(piLoaderUrl());
  const importMs = now() - started;
  const start = now();
  const cpu = process.cpuUsage();
  const result = await loader.discoverAndLoadExtensions([], project, agentDir);
  const ms = now() - start;
  const cpuMs = cpuSince(cpu);
  window = [start, start + ms];
  if (result.errors.length > 0) throw new Error(`pi: ${JSON.stringify(result.errors[0])}`);
  const tools = result.extensions.reduce((sum, extension) => sum + extension.tools.size, 0);
  return { ms, cpuMs, importMs, plugins: result.extensions.length, tools };
}

/**
 * `transpile-sucrase` / `transpile-babel`: the compiler alone, on the 30 plugin files
 * of `<project>/plugins`: `loadMs` is the first transform of an empty module (it loads
 * the compiler), `ms` the 30 files after it. sucrase through Rein's own transform
 * (packages/cli config/transpile.js), Babel through jiti's `transform` (pi's path).
 */
async function transpile(compiler) {
  const dir = path.join(project, "plugins");
  const files = fs.readdirSync(dir).map((name) => path.join(dir, name));
  const sources = files.map((file) => fs.readFileSync(file, "utf8"));
  let compile;
  if (compiler === "sucrase") {
    const { transform } = await import(new URL("config/transpile.js", pathToFileURL(REIN_CLI)).href);
    compile = (source, filename) => transform({ source, filename, ts: true, async: true }).code;
  } else {
    const { createJiti } = createRequire(REIN_CLI)("jiti");
    const jiti = createJiti(REIN_CLI, { fsCache: false });
    compile = (source, filename) => jiti.transform({ source, filename, ts: true, async: true });
  }
  const loadStart = now();
  compile("export {};\n", path.join(dir, "empty.ts"));
  const loadMs = now() - loadStart;
  const start = now();
  let bytes = 0;
  for (let i = 0; i < files.length; i++) bytes += compile(sources[i], files[i]).length;
  const ms = now() - start;
  window = [start, start + ms];
  if (bytes === 0) throw new Error(`${compiler} produced no output`);
  return { ms, loadMs, importMs: 0, plugins: files.length, tools: files.length };
}

/**
 * `trust-record`: records `<project>` as trusted (what `rein trust --yes` does), in the
 * `REIN_CONFIG_DIR` the parent chose. `trust-check`: the start-up trust check alone,
 * in verify mode: `startTrust` (read the record, hash every config name and every
 * recorded file) plus every recorded module's bytes through the gate (the check the
 * loader makes per file; the loader's own read of the file is not counted).
 */
const trustModule = (name) => import(new URL(`trust/${name}.js`, pathToFileURL(REIN_CLI)).href);

async function recordTrust() {
  const cli = await import(REIN_CLI);
  const { resolvePlugins } = await import(new URL("config/resolve-plugins.js", pathToFileURL(REIN_CLI)).href);
  const loaded = await cli.loadConfig({ cwd: project, recordTrust: true });
  const plugins = await resolvePlugins(loaded);
  loaded.trust.save();
  return { ms: 0, importMs: 0, plugins: plugins.length, tools: loaded.trust.files().length };
}

async function checkTrust() {
  const { startTrust } = await trustModule("project-trust");
  const { admitModule } = await trustModule("module-gate");
  const started = now();
  const trust = await startTrust({
    project,
    localFile: path.join(project, ".rein", "local.json"),
    managedFile: path.join(project, "no-managed", "managed.json"),
    env: process.env,
  });
  const startMs = now() - started;
  if (trust.mode !== "verify")
    throw new Error(`trust-check: expected a verified record, got mode ${trust.mode}`);
  const files = trust.files().filter((file) => !file.endsWith(".json"));
  const sources = files.map((file) => fs.readFileSync(file));
  const admitted = now();
  for (let i = 0; i < files.length; i++) admitModule(files[i], sources[i]);
  const admitMs = now() - admitted;
  trust.close();
  window = [started, now()];
  return { ms: startMs + admitMs, startMs, admitMs, importMs: 0, plugins: files.length, tools: files.length };
}

const out = impl.startsWith("transpile-")
  ? await transpile(impl.slice("transpile-".length))
  : impl === "trust-record"
    ? await recordTrust()
    : impl === "trust-check"
      ? await checkTrust()
      : impl === "rein"
        ? await loadRein()
        : await loadPi();
out.totalMs = performance.now();
out.maxRssMiB = process.resourceUsage().maxRSS / 1024;
out.window = window;
console.log(JSON.stringify(out));
