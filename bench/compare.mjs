/**
 * Before/after on one machine at one time: this tree's contenders against another
 * revision's (a git worktree, installed and built with `tsc -b`), interleaved in one
 * run so both see the same load.
 *
 *   node --expose-gc compare.mjs --before /path/to/worktree [--only turns,startup]
 *        [--reps 7] [--turns 1000] [--variants flat,full] [--cross] [--out file.md]
 *        [--rein reinMemory,reinOtel]   (Rein's rows; default: every row but reinOtel)
 *
 * - turns: every contender of `src/agents.mjs` (the floor, pi's `Agent`, Rein's harness
 *   rows) from both trees, loaded into this process (each tree's modules resolve their
 *   own @rein/harness, pi-ai and pi-agent-core), interleaved in one rotation per
 *   variant. Reported per contender: µs per turn, µs above its own tree's floor (each
 *   tree drives its own pi-ai's faux provider), and the main thread's CPU per turn
 *   above that floor (`process.threadCpuUsage()`, less swayed by other processes).
 *   `--cross` adds each tree's harness on the other tree's provider (this tree's
 *   `reinContenders(harness, faux)`), which tells the harness's change from pi-ai's.
 * - startup: `node -e 0`, `rein --version` and `pi --version` of both trees, then
 *   Rein's 30-plugin load (`startup-worker.mjs rein`, cold and warm cache) of both
 *   trees, a fresh process each, interleaved as `src/startup.mjs` does.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { writeFixtures } from "./src/startup-fixtures.mjs";
import { collect, median, now } from "./src/stats.mjs";

const { values } = parseArgs({
  options: {
    before: { type: "string" },
    only: { type: "string", default: "turns,startup" },
    reps: { type: "string", default: "7" },
    turns: { type: "string", default: "1000" },
    variants: { type: "string", default: "flat,full" },
    cross: { type: "boolean", default: false },
    rein: { type: "string", default: "reinMemory,reinJsonlDurable,reinJsonlNone,reinPlugins" },
    out: { type: "string" },
  },
});
if (!values.before) throw new Error("--before <worktree> is required");
const only = new Set(values.only.split(","));
const reps = Number(values.reps);
const log = (line) => console.error(`[compare] ${line}`);

const after = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const before = path.resolve(values.before);
const trees = { before, after };
const threadCpu = () => {
  const { user, system } = process.threadCpuUsage?.() ?? process.cpuUsage();
  return (user + system) / 1000;
};
const lines = [];
const print = (line = "") => {
  lines.push(line);
  console.log(line);
};

function revision(tree) {
  try {
    return execFileSync("git", ["-C", tree, "log", "-1", "--format=%h %s"], { encoding: "utf8" })
      .trim()
      .slice(0, 80);
  } catch {
    return "?";
  }
}

/** Interleaves `{ name, prepare, run, cleanup }` contenders; samples wall and main-thread CPU (ms). */
async function interleave(contenders, warmup = 1) {
  const samples = Object.fromEntries(contenders.map((c) => [c.name, { wall: [], cpu: [] }]));
  for (let rep = -warmup; rep < reps; rep++) {
    const offset = ((rep % contenders.length) + contenders.length) % contenders.length;
    for (let i = 0; i < contenders.length; i++) {
      const contender = contenders[(i + offset) % contenders.length];
      const state = contender.prepare ? await contender.prepare() : undefined;
      collect();
      const cpu = threadCpu();
      const start = now();
      const result = await contender.run(state);
      const wall = now() - start;
      // A contender that spawns a process reports that process's CPU time instead.
      const cpuMs = typeof result?.cpuMs === "number" ? result.cpuMs : threadCpu() - cpu;
      if (contender.cleanup) await contender.cleanup(state);
      if (rep >= 0) {
        samples[contender.name].wall.push(wall);
        samples[contender.name].cpu.push(cpuMs);
      }
    }
  }
  return samples;
}

/** Rein's rows (`--rein`, any ids of `src/agents.mjs`; `reinOtel` is the tracing row). */
const REIN_IDS = values.rein.split(",");

/**
 * The turn contenders of both trees, and with `--cross` each tree's harness also on
 * the other tree's provider (its pi-ai's faux provider, through its faux.mjs): rows
 * `harness` x columns `provider`, so the harness's own change shows apart from the
 * provider library's.
 */
async function compareTurns() {
  const turns = Number(values.turns);
  const agents = {};
  const harness = {};
  const faux = {};
  for (const [tree, dir] of Object.entries(trees)) {
    agents[tree] = await import(pathToFileURL(path.join(dir, "bench/src/agents.mjs")).href);
    harness[tree] = await import(pathToFileURL(path.join(dir, "packages/harness/dist/index.js")).href);
    faux[tree] = await import(pathToFileURL(path.join(dir, "bench/src/faux.mjs")).href);
  }
  const provider = { before: "pi-ai 0.73 faux", after: "pi-ai 1.6 faux" };
  for (const variant of values.variants.split(",")) {
    const contenders = [];
    for (const tree of Object.keys(trees)) {
      for (const id of ["floor", "pi"])
        contenders.push({ ...agents[tree].contender(id, turns, variant), name: `${id}|${tree}` });
    }
    for (const h of Object.keys(trees)) {
      for (const p of Object.keys(trees)) {
        if (h !== p && !values.cross) continue;
        const specs = h === p ? agents[h].CONTENDERS : agents.after.reinContenders(harness[h], faux[p]);
        for (const id of REIN_IDS) {
          contenders.push({ ...agents.after.contender(id, turns, variant, specs), name: `${id}@${h}|${p}` });
        }
      }
    }
    log(`turns: ${turns} tool turns, ${variant}, ${contenders.length} contenders x ${reps} reps`);
    const samples = await interleave(contenders);
    const perTurn = (ms) => (ms * 1000) / (turns + 1);
    const stat = (name) => ({
      wall: perTurn(median(samples[name].wall)),
      cpu: perTurn(median(samples[name].cpu)),
      best: perTurn(Math.min(...samples[name].wall)),
    });
    const floor = { before: stat("floor|before"), after: stat("floor|after") };
    const fmt = (v) => v.toFixed(0);
    const cell = (name, p) => {
      if (!samples[name]) return "";
      const s = stat(name);
      const f = floor[p];
      const above = name.startsWith("floor")
        ? ""
        : `; above floor ${fmt(s.wall - f.wall)} / **${fmt(s.cpu - f.cpu)}**`;
      return `${fmt(s.wall)} / ${fmt(s.cpu)} [${fmt(s.best)}]${above}`;
    };
    print();
    print(`Turns, ${variant}: ${turns} tool turns + answer, ${reps} interleaved rounds; µs per turn`);
    print(
      "(median wall / median main-thread CPU [fastest wall]; above floor: minus the floor on the same provider, CPU in bold)",
    );
    print();
    print(`| contender | on ${provider.before} | on ${provider.after} |`);
    print("|---|---|---|");
    print(`| floor | ${cell("floor|before", "before")} | ${cell("floor|after", "after")} |`);
    print(
      `| pi \`Agent\` (0.73.1 / 1.6.0) | ${cell("pi|before", "before")} | ${cell("pi|after", "after")} |`,
    );
    for (const id of REIN_IDS) {
      for (const h of Object.keys(trees)) {
        print(
          `| ${id}, ${h} harness | ${cell(`${id}@${h}|before`, "before")} | ${cell(`${id}@${h}|after`, "after")} |`,
        );
      }
    }
    const ratio = (name, p) => {
      if (!samples[name]) return "";
      const f = floor[p];
      const s = stat(name);
      const pi = stat(`pi|${p}`);
      return `${((s.wall - f.wall) / (pi.wall - f.wall)).toFixed(2)}× / ${((s.cpu - f.cpu) / (pi.cpu - f.cpu)).toFixed(2)}×`;
    };
    print();
    print("Overhead above the floor as a multiple of pi's `Agent` on the same provider (wall / CPU):");
    print();
    print(`| contender | on ${provider.before} (vs pi 0.73.1) | on ${provider.after} (vs pi 1.6.0) |`);
    print("|---|---|---|");
    for (const id of REIN_IDS) {
      for (const h of Object.keys(trees)) {
        print(
          `| ${id}, ${h} harness | ${ratio(`${id}@${h}|before`, "before")} | ${ratio(`${id}@${h}|after`, "after")} |`,
        );
      }
    }
    if (REIN_IDS.includes("reinOtel") && REIN_IDS.includes("reinMemory")) {
      // The tracing target: the row with @rein/plugin-otel against the same row without it.
      print();
      print("`reinOtel` / `reinMemory` per turn, each tree on its own provider (wall / CPU):");
      print();
      for (const t of Object.keys(trees)) {
        const o = stat(`reinOtel@${t}|${t}`);
        const m = stat(`reinMemory@${t}|${t}`);
        print(`- ${t}: ${(o.wall / m.wall).toFixed(2)}× / ${(o.cpu / m.cpu).toFixed(2)}×`);
      }
    }
  }
}

/** Prints the process's CPU time (user + system, every thread, ms) on stderr at exit. */
const CPU_PRELOAD =
  'data:text/javascript,process.on("exit",()=>{const u=process.cpuUsage();process.stderr.write("\\ncpu="+(u.user+u.system)/1000+"\\n")})';

/** Runs `node ...args` to exit; resolves `{ stdout, stderr, cpuMs }`, rejects on a non-zero exit. */
function node(args, env, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", CPU_PRELOAD, ...args], {
      env,
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
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
      const cpu = /\ncpu=([\d.]+)\n/.exec(stderr);
      if (code === 0) resolve({ stdout, stderr, cpuMs: cpu ? Number(cpu[1]) : Number.NaN });
      else reject(new Error(`node ${args.join(" ")} exited ${code}: ${stderr.trim().slice(0, 500)}`));
    });
  });
}

function piBin(tree) {
  const pkgDir = ["@earendil-works", "@mariozechner"]
    .map((scope) => path.join(tree, "bench/node_modules", scope, "pi-coding-agent"))
    .find((dir) => fs.existsSync(dir));
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8"));
  return { file: path.join(pkgDir, pkg.bin.pi), version: pkg.version };
}

async function compareStartup() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-compare-startup-"));
  const agentDir = path.join(dir, "pi-agent");
  fs.mkdirSync(agentDir);
  // Rein loads only trusted project code: a config dir of its own, where each tree records the fixtures.
  const env = {
    ...process.env,
    PI_CODING_AGENT_DIR: agentDir,
    NO_COLOR: "1",
    REIN_CONFIG_DIR: path.join(dir, "rein-config"),
  };
  delete env.REIN_CACHE_DIR;
  try {
    const commands = { node: ["-e", "0"] };
    for (const [tree, root] of Object.entries(trees)) {
      commands[`${tree}:rein`] = [path.join(root, "packages/cli/dist/bin.js"), "--version"];
      commands[`${tree}:pi`] = [piBin(root).file, "--version"];
    }
    log(`startup: node -e 0, rein --version and pi --version of both trees, ${reps} reps`);
    const version = await interleave(
      Object.entries(commands).map(([name, args]) => ({ name, run: () => node(args, env) })),
    );
    print();
    print(
      `Start-up: --version, spawn to exit, ${reps} interleaved rounds (medians, ms; fastest wall in brackets; CPU: the process's, every thread)`,
    );
    print();
    print("| command | wall | wall above `node -e 0` | CPU | CPU above `node -e 0` |");
    print("|---|---|---|---|---|");
    const floor = { wall: median(version.node.wall), cpu: median(version.node.cpu) };
    for (const name of Object.keys(commands)) {
      const wall = median(version[name].wall);
      const cpu = median(version[name].cpu);
      const [tree, bin] = name.split(":");
      const label =
        name === "node"
          ? "`node -e 0`"
          : `${tree}: \`${bin} --version\`${bin === "pi" ? ` (${piBin(trees[tree]).version})` : ""}`;
      const above = (v, f) => (name === "node" ? "" : (v - f).toFixed(1));
      print(
        `| ${label} | ${wall.toFixed(1)} [${Math.min(...version[name].wall).toFixed(1)}] | ${above(wall, floor.wall)} | ${cpu.toFixed(1)} | ${above(cpu, floor.cpu)} |`,
      );
    }

    const { reinDir, count } = writeFixtures(path.join(dir, "fixtures"));
    log(`startup: Rein's ${count} plugins, cold + warm, both trees, ${reps} reps (+1 cold warm-up)`);
    const results = { before: { cold: [], warm: [] }, after: { cold: [], warm: [] } };
    for (const root of Object.values(trees)) {
      const trustCache = path.join(dir, "cache-trust");
      await node([path.join(root, "bench/src/startup-worker.mjs"), "trust-record", reinDir], {
        ...env,
        REIN_CACHE_DIR: trustCache,
        TMPDIR: trustCache,
      });
    }
    let fresh = 0;
    for (let rep = -1; rep < reps; rep++) {
      const order = rep % 2 === 0 ? ["before", "after"] : ["after", "before"];
      for (const tree of order) {
        const cacheDir = path.join(dir, `cache-${fresh++}`);
        fs.mkdirSync(cacheDir);
        const workerFile = path.join(trees[tree], "bench/src/startup-worker.mjs");
        const run = async () => {
          const { stdout, cpuMs } = await node([workerFile, "rein", reinDir], {
            ...env,
            REIN_CACHE_DIR: cacheDir,
            TMPDIR: cacheDir,
          });
          const out = JSON.parse(stdout.trim().split("\n").at(-1));
          if (out.plugins !== count || out.tools !== count)
            throw new Error(`${tree}: ${JSON.stringify(out)}`);
          return { ...out, processCpuMs: cpuMs };
        };
        const cold = await run();
        const warm = rep >= 0 ? await run() : undefined;
        if (rep >= 0) {
          results[tree].cold.push(cold);
          results[tree].warm.push(warm);
        }
        fs.rmSync(cacheDir, { recursive: true, force: true });
      }
    }
    print();
    print(
      `Rein's ${count} TypeScript plugins (\`buildAgent\`), a fresh process each, ${reps} interleaved rounds (medians, ms)`,
    );
    print();
    print(
      "| case | tree | call (wall) | call (CPU) | host imports (wall) | process start to loaded (wall) | process CPU to exit | peak RSS MiB |",
    );
    print("|---|---|---|---|---|---|---|---|");
    for (const kind of ["cold", "warm"]) {
      for (const tree of Object.keys(trees)) {
        const runs = results[tree][kind];
        const m = (key) => median(runs.map((r) => r[key]));
        print(
          `| ${kind} | ${tree} | ${m("ms").toFixed(1)} [${Math.min(...runs.map((r) => r.ms)).toFixed(1)}] | ${m("cpuMs").toFixed(1)} | ${m("importMs").toFixed(1)} | ${m("totalMs").toFixed(1)} | ${m("processCpuMs").toFixed(1)} | ${m("maxRssMiB").toFixed(0)} |`,
        );
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const started = now();
print(`- Date: ${new Date().toISOString()}; Node ${process.version}; nproc ${os.availableParallelism()}`);
print(`- before: ${before} (${revision(before)}); after: ${after} (${revision(after)})`);
if (only.has("turns")) await compareTurns();
if (only.has("startup")) await compareStartup();
print();
print(
  `- Load average at the end: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}; wall time ${((now() - started) / 1000).toFixed(0)} s`,
);
if (values.out) fs.writeFileSync(values.out, `${lines.join("\n")}\n`);
