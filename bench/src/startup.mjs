/**
 * Benchmark 4: start-up and plugins, every measurement in a fresh process.
 *
 * - `--version`: `node -e 0` (the floor), `rein --version` (`packages/cli/dist/bin.js`)
 *   and `pi --version` (pi-coding-agent's `pi` bin), each spawned with this node and
 *   timed from spawn to exit, interleaved. Peak RSS comes from one more untimed
 *   round with a tiny `--import` preload that prints `maxRSS` at exit.
 * - Plugins: 30 generated TypeScript plugins (startup-fixtures.mjs) loaded by
 *   Rein's `buildAgent()` and 30 equivalent extensions by pi's
 *   `discoverAndLoadExtensions()`, each in a fresh process (startup-worker.mjs).
 *   Cold = a fresh, empty transpile cache (Rein: `REIN_CACHE_DIR`; pi: its jiti
 *   file cache, which lives in `os.tmpdir()/jiti`, so `TMPDIR`); warm = the next
 *   process on that same cache. Per round: Rein cold, Rein warm, pi cold, pi warm,
 *   the starting implementation alternating.
 * - The compilers alone: Rein's sucrase transform and jiti's Babel transform on the
 *   same 30 plugin files, a fresh process each (load time, then the 30 files).
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeFixtures } from "./startup-fixtures.mjs";
import { interleave, median } from "./stats.mjs";

const WORKER = fileURLToPath(new URL("./startup-worker.mjs", import.meta.url));
const REIN_BIN = fileURLToPath(new URL("../../packages/cli/dist/bin.js", import.meta.url));
const REIN_PACKAGE = fileURLToPath(new URL("../../packages/cli/package.json", import.meta.url));
const RSS_PRELOAD =
  'data:text/javascript,process.on("exit",()=>process.stderr.write("\\nmaxrss="+process.resourceUsage().maxRSS+"\\n"))';

/** pi-coding-agent's `pi` bin, from its package.json. */
function piBin() {
  const index = fileURLToPath(import.meta.resolve("@earendil-works/pi-coding-agent"));
  let dir = path.dirname(index);
  while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir);
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  return { file: path.join(dir, pkg.bin.pi), version: pkg.version };
}

/** Runs `node ...args` to exit; resolves `{ code, stdout, stderr }`, rejects on a non-zero exit. */
function node(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("error", reject);
    child.on("close", (code) => {
      if (code === 0) resolve({ code, stdout, stderr });
      else reject(new Error(`node ${args.join(" ")} exited ${code}: ${stderr.trim().slice(0, 500)}`));
    });
  });
}

/** pi prints its version on stderr when stdout is not a terminal (it takes stdout over in non-interactive modes). */
function expectVersion(name, { stdout, stderr }, version) {
  const printed = (stdout.trim() || stderr.trim()).split("\n")[0];
  if (printed !== version) throw new Error(`${name} printed ${JSON.stringify(printed)}, expected ${version}`);
}

async function benchVersion({ reps, env, log }) {
  const pi = piBin();
  const reinVersion = JSON.parse(fs.readFileSync(REIN_PACKAGE, "utf8")).version;
  const commands = {
    node: { args: ["-e", "0"] },
    rein: { args: [REIN_BIN, "--version"], version: reinVersion },
    pi: { args: [pi.file, "--version"], version: pi.version },
  };
  log(`startup: node -e 0 / rein --version / pi --version, ${reps} reps, interleaved`);
  const times = await interleave(
    Object.entries(commands).map(([name, { args, version }]) => ({
      name,
      run: async () => {
        const output = await node(args, env);
        if (version) expectVersion(name, output, version);
      },
    })),
    { reps },
  );
  const out = {};
  for (const [name, { args }] of Object.entries(commands)) {
    const { stderr } = await node(["--import", RSS_PRELOAD, ...args], env);
    const rss = /maxrss=(\d+)/.exec(stderr);
    out[name] = { ms: times[name].median, maxRssMiB: rss ? Number(rss[1]) / 1024 : Number.NaN };
  }
  return out;
}

async function worker(impl, project, cacheDir, env) {
  const { stdout } = await node([WORKER, impl, project], {
    ...env,
    REIN_CACHE_DIR: cacheDir,
    TMPDIR: cacheDir,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1));
}

/** Files in the transpile cache a cold run left behind: Rein's `$REIN_CACHE_DIR/jiti/<transform version>/`, pi's `$TMPDIR/jiti`. */
function cachedFiles(cacheDir) {
  const dir = path.join(cacheDir, "jiti");
  if (!fs.existsSync(dir)) return 0;
  const entries = fs.readdirSync(dir, { recursive: true, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).length;
}

async function benchPlugins({ reps, dir, env, log }) {
  const { reinDir, piDir, count } = writeFixtures(path.join(dir, "fixtures"));
  // Rein loads only trusted project code: the fixtures are recorded once, as `rein trust` would.
  await worker("trust-record", reinDir, path.join(dir, "cache-trust"), env);
  const projects = { rein: reinDir, pi: piDir };
  const impls = Object.keys(projects);
  const samples = Object.fromEntries(impls.map((impl) => [impl, { cold: [], warm: [] }]));
  const cached = {};
  log(
    `startup: ${count} plugins cold + warm, Rein and pi, ${reps} reps (+1 cold warm-up), fresh process each`,
  );
  let fresh = 0;
  for (let rep = -1; rep < reps; rep++) {
    for (let i = 0; i < impls.length; i++) {
      const impl = impls[(i + rep + 1) % impls.length];
      const cacheDir = path.join(dir, `cache-${fresh++}`);
      fs.mkdirSync(cacheDir);
      const cold = await worker(impl, projects[impl], cacheDir, env);
      cached[impl] = cachedFiles(cacheDir);
      if (cached[impl] < count) {
        throw new Error(`${impl}: only ${cached[impl]} files in the transpile cache after a cold load`);
      }
      // The warm-up round only fills the OS file cache (node_modules, fixtures): no warm run then.
      const warm = rep >= 0 ? await worker(impl, projects[impl], cacheDir, env) : cold;
      for (const result of [cold, warm]) {
        if (result.plugins !== count || result.tools !== count) {
          throw new Error(
            `${impl} loaded ${result.plugins} plugins and ${result.tools} tools, expected ${count}`,
          );
        }
      }
      if (rep >= 0) {
        samples[impl].cold.push(cold);
        samples[impl].warm.push(warm);
      }
      fs.rmSync(cacheDir, { recursive: true, force: true });
    }
  }
  const summary = (runs) => ({
    ms: median(runs.map((r) => r.ms)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    importMs: median(runs.map((r) => r.importMs)),
    totalMs: median(runs.map((r) => r.totalMs)),
    maxRssMiB: median(runs.map((r) => r.maxRssMiB)),
    samples: runs.map((r) => r.ms),
  });
  return Object.fromEntries(
    impls.map((impl) => [
      impl,
      {
        count,
        cachedFiles: cached[impl],
        cold: summary(samples[impl].cold),
        warm: summary(samples[impl].warm),
      },
    ]),
  );
}

/**
 * The start-up trust check alone (invariant 9) on the 30 plugin files, verify mode,
 * a fresh process each: `{ count, ms, startMs, admitMs }` medians.
 */
async function benchTrust({ reps, dir, env, log }) {
  const { reinDir, count } = writeFixtures(path.join(dir, "trust-fixtures"));
  const cacheDir = path.join(dir, "cache-trust-check");
  fs.mkdirSync(cacheDir, { recursive: true });
  await worker("trust-record", reinDir, cacheDir, env);
  log(`startup: the trust check alone on ${count} plugin files, ${reps} reps, fresh process each`);
  const runs = [];
  for (let rep = 0; rep < reps; rep++) runs.push(await worker("trust-check", reinDir, cacheDir, env));
  if (runs[0].plugins < count) throw new Error(`trust-check saw ${runs[0].plugins} files, expected ${count}`);
  return {
    count: runs[0].plugins,
    ms: median(runs.map((r) => r.ms)),
    startMs: median(runs.map((r) => r.startMs)),
    admitMs: median(runs.map((r) => r.admitMs)),
  };
}

/**
 * The compiler alone on the 30 Rein plugin files, a fresh process each, interleaved:
 * Rein's sucrase transform vs jiti's Babel (what pi's loader and Rein's before it use).
 * Per compiler `{ loadMs, ms }` medians: load = first transform of an empty module.
 */
async function benchTranspilers({ reps, dir, env, log }) {
  const { reinDir } = writeFixtures(path.join(dir, "transpile-fixtures"));
  log(`startup: the compilers alone (sucrase, Babel) on 30 plugin files, ${reps} reps, fresh process each`);
  const compilers = ["sucrase", "babel"];
  const samples = Object.fromEntries(compilers.map((c) => [c, []]));
  for (let rep = -1; rep < reps; rep++) {
    for (let i = 0; i < compilers.length; i++) {
      const compiler = compilers[(i + rep + 1) % compilers.length];
      const result = await worker(`transpile-${compiler}`, reinDir, dir, env);
      if (rep >= 0) samples[compiler].push(result);
    }
  }
  return Object.fromEntries(
    compilers.map((c) => [
      c,
      { loadMs: median(samples[c].map((r) => r.loadMs)), ms: median(samples[c].map((r) => r.ms)) },
    ]),
  );
}

/**
 * `{ version: { node, rein, pi: { ms, maxRssMiB } }, plugins: { rein, pi: { count, cachedFiles, cold, warm } },
 *    transpilers: { sucrase, babel: { loadMs, ms } } }`;
 * cold / warm are `{ ms, cpuMs, importMs, totalMs, maxRssMiB, samples }`, medians in ms.
 */
export async function benchStartup({ reps, log = () => {} }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-startup-"));
  // pi reads its settings and extensions from ~/.pi/agent unless told otherwise: an empty folder keeps the user's out.
  const agentDir = path.join(dir, "pi-agent");
  fs.mkdirSync(agentDir);
  // Rein checks the fixtures against a trust record kept in a config dir of the bench's own.
  const env = {
    ...process.env,
    PI_CODING_AGENT_DIR: agentDir,
    NO_COLOR: "1",
    REIN_CONFIG_DIR: path.join(dir, "rein-config"),
    REIN_MANAGED_CONFIG: path.join(dir, "no-managed.json"),
  };
  delete env.REIN_CACHE_DIR;
  delete env.REIN_TRUST_PROJECT;
  try {
    const version = await benchVersion({ reps, env, log });
    const plugins = await benchPlugins({ reps, dir, env, log });
    const transpilers = await benchTranspilers({ reps, dir, env, log });
    const trust = await benchTrust({ reps, dir, env, log });
    return { version, plugins, transpilers, trust };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
