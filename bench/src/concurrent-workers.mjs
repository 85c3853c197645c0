/**
 * Concurrent runs per worker (issue 35): `rein worker --concurrency N` against a
 * loopback model server with a fixed latency (every request streams its first
 * chunk at once and its last after `--latency` ms, in a process of its own), on a
 * real PostgreSQL queue and JSONL sessions. Per shape (workers x runs in flight),
 * two measurements, each on fresh workers and a fresh database:
 *
 * - **steady** (the issue's ideal, "runs in flight / latency per run", is a rate): a
 *   continuous supply of `--waves` x the runs in flight (default 4), all queued at the
 *   start in a few multi-row inserts so the queue never runs dry; throughput is counted
 *   over the steady window between the end of the first wave (the N-th completion, N =
 *   runs in flight) and the start of the drain (the (jobs - N)-th completion, after which
 *   fewer than N jobs are left), by the database's own completion times.
 * - **burst**: exactly N jobs sent at once (50 sends at a time, as a client would),
 *   throughput = N / (first send to last completion): start-up of every run on one
 *   event loop included.
 *
 * Both report the workers' CPU per job (utime + stime from /proc over all measured jobs,
 * the model server excluded) and RSS per idle in-flight run (peak RSS while the runs
 * wait on the model, minus the worker's RSS before, over the runs in flight in that
 * worker). Each worker first runs two warm-up jobs (module loading, once per process),
 * outside the measurement.
 *
 * Standalone: `node bench/src/concurrent-workers.mjs [--shapes 1x200,4x250] [--latency 2000]
 * [--waves 4] [--modes steady,burst] [--store jsonl|postgres]` (after `tsc -b`; a shape is
 * workers x concurrency). `--store postgres` keeps the sessions in the queue's database
 * (`session: { store: "postgres" }`), as workers on several hosts would.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  closeQueue,
  openQueue,
  PROMPT_QUEUE,
  QUEUE_SCHEMA,
  submitPrompt,
} from "../../packages/cli/dist/worker/prompt-queue.js";
import pg from "../../packages/cli/node_modules/pg/lib/index.js";
import { SessionStore } from "../../packages/harness/dist/index.js";
import { PostgresSessionStore } from "../../packages/store-postgres/dist/index.js";
import { createDatabase, dropDatabase, startPostgres } from "../../packages/test-postgres/dist/index.js";
import { now } from "./stats.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const REIN = path.join(root, "packages/cli/dist/bin.js");
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICK = 100;

/** The model server: run as a child (`--serve <latency>`), prints its port. */
function serve(latency) {
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write(chunk({ role: "assistant", content: "do" }));
      setTimeout(() => {
        response.write(chunk({ content: "ne" }));
        response.write(chunk({}, "stop"));
        response.end("data: [DONE]\n\n");
      }, latency);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
}

function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICK;
}

/** A process's CPU ms with that of its children: its own, the waited-for ones', the live ones'. */
function treeCpuMs(pid) {
  const stat = (p) => fs.readFileSync(`/proc/${p}/stat`, "utf8").split(") ")[1].split(" ");
  const own = stat(pid);
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = stat(entry);
      if (fields[1] === String(pid)) ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited meanwhile: its time is in the parent's children's time once waited for
    }
  }
  return (ticks * 1000) / TICK;
}

/** The postmaster serving `url` (its command line names the port), if it runs here. */
function postmasterPid(url) {
  const port = new URL(url).port;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (/postgres$/.test(args[0]) && args.includes("-D") && args[args.indexOf("-p") + 1] === port)
        return Number(entry);
    } catch {
      // exited meanwhile
    }
  }
  return undefined;
}

function rssKiB(pid) {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line.split(/\s+/)[1]);
}

async function once(
  serverUrl,
  modelUrl,
  workers,
  concurrency,
  sessionStore = "jsonl",
  waves = 0,
  others = () => 0,
) {
  // waves 0: the burst (N jobs sent as a client would); waves >= 3: the steady supply.
  const inFlight = workers * concurrency;
  const jobs = inFlight * Math.max(1, waves);
  const url = await createDatabase(serverUrl, "rein_bench");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-concurrent-"));
  fs.writeFileSync(
    path.join(dir, "rein.config.ts"),
    `export default {
  model: "local",
  models: [{ id: "local", baseUrl: "${modelUrl}", api: "openai-completions", contextWindow: 100000 }],${sessionStore === "postgres" ? `\n  session: { store: "postgres", url: ${JSON.stringify(url)} },` : ""}
};
`,
  );
  const pgStore = sessionStore === "postgres" ? new PostgresSessionStore(url) : undefined;
  const store = pgStore ?? new SessionStore(path.join(dir, ".rein/sessions"));
  const make = async () => {
    const session = await store.create({ cwd: dir });
    await session.close();
    return session.id;
  };
  const ids = [];
  const warmups = [];
  for (let i = 0; i < workers * 2; i++) warmups.push(await make());
  for (let i = 0; i < jobs; i += 20)
    ids.push(...(await Promise.all(Array.from({ length: Math.min(20, jobs - i) }, make))));
  const children = [];
  const logged = [];
  let startedAt;
  try {
    await closeQueue(await openQueue(url));
    const ready = [];
    for (let i = 0; i < workers; i++) {
      const child = spawn(
        process.execPath,
        [
          // e.g. REIN_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof": profiles the workers.
          ...(process.env.REIN_BENCH_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
          REIN,
          "worker",
          "--db",
          url,
          "--poll",
          process.env.REIN_BENCH_POLL ?? "0.5",
          "--concurrency",
          String(concurrency),
        ],
        {
          cwd: dir,
          env: { ...process.env, NO_COLOR: "1", OPENAI_API_KEY: "x", REIN_TRUST_PROJECT: "1" },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      children.push(child);
      ready.push(
        new Promise((resolve, reject) => {
          let err = "";
          child.stderr.on("data", (chunk) => {
            err += chunk;
            if (err.includes("ready")) resolve();
            if (process.env.REIN_BENCH_TIMELINE) {
              const ended = String(chunk).match(/\) completed/g)?.length ?? 0;
              if (ended) logged.push([Number(((now() - (startedAt ?? now())) / 1000).toFixed(2)), ended]);
            }
          });
          child.on("exit", (code) => reject(new Error(`worker exited ${code}: ${err}`)));
        }),
      );
    }
    await Promise.all(ready);
    const client = new pg.Client({ connectionString: url });
    client.on("error", () => undefined); // the database is dropped with FORCE after a failed shape
    await client.connect();
    // Enough connections that sending a thousand jobs does not take longer than running them.
    const boss = await openQueue(url, { role: "client", connections: 8 });
    /** Jobs held by a worker (active) at each poll: how full the slots were. */
    const active = [];
    const completed = async () => {
      const { rows } = await client.query(
        `SELECT count(*) FILTER (WHERE state = 'completed')::int AS n, count(*) FILTER (WHERE state = 'active')::int AS a
           FROM ${QUEUE_SCHEMA}.job`,
      );
      if (startedAt !== undefined) active.push([now() - startedAt, rows[0].a]);
      return rows[0].n;
    };
    // Warm-up: the first jobs of a process load the config, plugins and provider modules
    // (once per process); the measurement is of the steady state after them.
    await Promise.all(warmups.map((sessionId) => submitPrompt(boss, { sessionId, prompt: "warm up" })));
    while ((await completed()) < warmups.length) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const baseRss = children.map((c) => rssKiB(c.pid));
    const baseCpu = children.map((c) => cpuMs(c.pid));
    const baseOthers = others();
    const clock = async () =>
      Number((await client.query("SELECT extract(epoch FROM now()) * 1000 AS t")).rows[0].t);
    const startedOn = await clock();
    const started = now();
    startedAt = started;
    if (waves > 0) {
      // The whole supply queued at once (multi-row inserts, each a few ms): the queue holds
      // waiting jobs until the drain, whatever the workers' pace.
      const data = ids.map((sessionId) => ({
        requestId: randomUUID(),
        sessionId,
        prompt: "go",
        submittedAt: Date.now(),
      }));
      for (let i = 0; i < data.length; i += 500)
        await boss.insert(
          PROMPT_QUEUE,
          data.slice(i, i + 500).map((d) => ({ data: d })),
        );
    } else {
      // In slices: a thousand sends at once would wait out the client pool's connect timeout.
      for (let i = 0; i < ids.length; i += 50)
        await Promise.all(
          ids.slice(i, i + 50).map((sessionId) => submitPrompt(boss, { sessionId, prompt: "go" })),
        );
    }
    const submitted = (now() - started) / 1000;
    let done = 0;
    const timeline = [];
    const peakRss = [...baseRss];
    while (done < jobs) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      children.forEach((c, i) => {
        peakRss[i] = Math.max(peakRss[i], rssKiB(c.pid));
      });
      done = (await completed()) - warmups.length;
      const at = (now() - started) / 1000;
      if (timeline.length === 0 || at - timeline.at(-1)[0] >= 1) timeline.push([Number(at.toFixed(1)), done]);
    }
    if (process.env.REIN_BENCH_TIMELINE)
      console.error(
        `[bench] submitted in ${submitted.toFixed(2)} s; completed over time: ${JSON.stringify(timeline)}`,
      );
    const seconds = (now() - started) / 1000;
    const cpu = children.reduce((sum, c, i) => sum + cpuMs(c.pid) - baseCpu[i], 0);
    const othersCpu = others() - baseOthers;
    const perRunKiB = children.map((_, i) => (peakRss[i] - baseRss[i]) / concurrency);
    // The database's completion times of the measured jobs, in ms from the first send.
    const ends = (
      await client.query(
        `SELECT extract(epoch FROM completed_on) * 1000 AS t, extract(epoch FROM completed_on - started_on) * 1000 AS held
           FROM ${QUEUE_SCHEMA}.job WHERE state = 'completed' AND name = $1 ORDER BY completed_on`,
        [PROMPT_QUEUE],
      )
    ).rows
      .map((r) => ({ t: Number(r.t) - startedOn, held: Number(r.held) }))
      .filter((r) => r.t >= 0);
    // How long a worker held a job (fetch to completion): the model's latency plus the run's own.
    const held = ends.map((r) => r.held).sort((a, b) => a - b);
    const heldMs = { p50: held[Math.floor(held.length / 2)], p90: held[Math.floor(held.length * 0.9)] };
    if (waves > 0) {
      // Within the steady window: held time, and how long a slot stood empty per cycle.
      const inWindow = ends
        .slice(inFlight, jobs - inFlight)
        .map((r) => r.held)
        .sort((a, b) => a - b);
      heldMs.windowP50 = inWindow[Math.floor(inWindow.length / 2)];
      heldMs.windowMean = inWindow.reduce((a, b) => a + b, 0) / inWindow.length;
      const from = ends[inFlight - 1].t;
      const to = ends[jobs - inFlight - 1].t;
      const held = active.filter(([t]) => t >= from && t <= to).map(([, a]) => a);
      heldMs.activeMean = held.reduce((a, b) => a + b, 0) / held.length;
    }
    ends.forEach((r, i) => {
      ends[i] = r.t;
    });
    let steady;
    if (waves > 0) {
      const from = ends[inFlight - 1];
      const to = ends[jobs - inFlight - 1];
      steady = {
        from: from / 1000,
        to: to / 1000,
        runs: jobs - 2 * inFlight,
        throughput: (1000 * (jobs - 2 * inFlight)) / (to - from),
      };
    }
    await closeQueue(boss);
    await client.end();
    return {
      mode: waves > 0 ? "steady" : "burst",
      workers,
      concurrency,
      jobs,
      seconds,
      submitSeconds: submitted,
      firstEndSeconds: ends[0] / 1000,
      heldMs,
      ...(steady ? { window: steady } : {}),
      throughput: steady ? steady.throughput : jobs / seconds,
      cpuPerJobMs: cpu / jobs,
      // PostgreSQL (every backend) and the model server, per job: the rest of the machine's work.
      othersCpuPerJobMs: othersCpu / jobs,
      rssPerRunKiB: Math.max(...perRunKiB),
      baseRssMiB: Math.max(...baseRss) / 1024,
    };
  } finally {
    for (const child of children) child.kill("SIGTERM");
    await Promise.all(children.map((child) => new Promise((resolve) => child.once("exit", resolve))));
    fs.rmSync(dir, { recursive: true, force: true });
    await dropDatabase(url).catch(() => undefined);
  }
}

/** Every shape in each mode once (steady, then burst), on one PostgreSQL and one model server. */
export async function benchConcurrentWorkers({
  shapes = [
    [1, 200],
    [4, 250],
  ],
  latency = 2000,
  waves = 4,
  modes = ["steady", "burst"],
  store = "jsonl",
  log = () => {},
} = {}) {
  if (modes.includes("steady") && !(waves >= 3))
    throw new Error("--waves: the steady window needs at least 3 waves (first wave, window, drain)");
  const server = spawn(process.execPath, [fileURLToPath(import.meta.url), "--serve", String(latency)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise((resolve) =>
    server.stdout.once("data", (d) => resolve(Number(String(d).trim()))),
  );
  const postgres = await startPostgres();
  const rows = [];
  try {
    for (const [workers, concurrency] of shapes) {
      for (const mode of modes) {
        const load = os.loadavg()[0];
        const postmaster = postmasterPid(postgres.url);
        const others = () => treeCpuMs(server.pid) + (postmaster ? treeCpuMs(postmaster) : 0);
        const row = await once(
          postgres.url,
          `http://127.0.0.1:${port}/v1`,
          workers,
          concurrency,
          store,
          mode === "steady" ? waves : 0,
          others,
        );
        row.store = store;
        row.load = [load, os.loadavg()[0]];
        row.ideal = (workers * concurrency) / (latency / 1000);
        log(JSON.stringify(row));
        rows.push(row);
      }
    }
  } finally {
    server.kill();
    await postgres.stop();
  }
  return { latency, waves, rows };
}

const measure = (r) =>
  r.mode === "steady"
    ? `steady: ${r.jobs} runs, window ${r.window.from.toFixed(1)}-${r.window.to.toFixed(1)} s (${r.window.runs} runs)`
    : `burst: ${r.jobs} runs at once`;

/** The most runs/s this machine's cores could finish at the row's CPU per job (workers, PostgreSQL, model server). */
const cpuBound = (r) => (1000 * os.cpus().length) / (r.cpuPerJobMs + r.othersCpuPerJobMs);

export function concurrentRows({ latency, rows }) {
  return [
    `| workers x runs in flight (model latency ${latency} ms) | measured over | runs/s (ideal) | of ideal | CPU per job | + PostgreSQL, model server | CPU bound on ${os.cpus().length} cores | RSS per idle in-flight run | worker RSS before | load avg |`,
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.workers} x ${r.concurrency} | ${measure(r)} | ${r.throughput.toFixed(1)} (${r.ideal.toFixed(0)}) | ${((100 * r.throughput) / r.ideal).toFixed(0)} % | ${r.cpuPerJobMs.toFixed(1)} ms | ${r.othersCpuPerJobMs.toFixed(1)} ms | ${cpuBound(r).toFixed(0)} runs/s | ${(r.rssPerRunKiB / 1024).toFixed(2)} MiB | ${r.baseRssMiB.toFixed(0)} MiB | ${r.load.map((l) => l.toFixed(1)).join("-")} |`,
    ),
  ].join("\n");
}

/**
 * The `workers` rows of `pnpm bench`: each shape against the issue's three targets. The
 * throughput target is the steady row (the issue's ideal is a rate); the burst row is
 * shown beside it, against the same target, so a slow start-up of a burst stays visible.
 */
export function workerBenchRows({ latency, rows }) {
  const met = (ok) => (ok ? "yes" : "**no**");
  return rows.flatMap((r) => {
    const shape = `${r.workers} worker${r.workers > 1 ? "s" : ""} x ${r.concurrency} runs in flight, model ${latency} ms`;
    const share = r.throughput / r.ideal;
    const name =
      r.mode === "steady"
        ? "steady throughput (continuous supply)"
        : "burst throughput (one wave sent at once)";
    return [
      {
        group: "workers",
        name: `${shape}: ${name}`,
        measured: `${r.throughput.toFixed(1)} runs/s (ideal ${r.ideal.toFixed(0)})`,
        ratio: `${(100 * share).toFixed(0)} %`,
        target: ">= 90 % of ideal",
        met: met(share >= 0.9),
      },
      {
        group: "workers",
        name: `${shape}, ${r.mode}: RSS per idle in-flight run`,
        measured: `${(r.rssPerRunKiB / 1024).toFixed(2)} MiB`,
        ratio: "",
        target: "<= 1 MiB",
        met: met(r.rssPerRunKiB <= 1024),
      },
      {
        group: "workers",
        name: `${shape}, ${r.mode}: CPU per job`,
        measured: `${r.cpuPerJobMs.toFixed(1)} ms`,
        ratio: "",
        target: "<= 10 ms",
        met: met(r.cpuPerJobMs <= 10),
      },
    ];
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      shapes: { type: "string" },
      latency: { type: "string" },
      serve: { type: "string" },
      store: { type: "string" },
      waves: { type: "string" },
      modes: { type: "string" },
    },
  });
  if (values.serve) serve(Number(values.serve));
  else {
    const shapes = (values.shapes ?? "1x200,4x250").split(",").map((s) => s.split("x").map(Number));
    const result = await benchConcurrentWorkers({
      shapes,
      latency: Number(values.latency ?? 2000),
      waves: Number(values.waves ?? 4),
      modes: (values.modes ?? "steady,burst").split(","),
      store: values.store ?? "jsonl",
      log: (line) => console.error(`[bench] ${line}`),
    });
    console.log(concurrentRows(result));
  }
}
