/**
 * Concurrent runs per worker (issue 35): `rein worker --concurrency N` against a
 * loopback model server with a fixed latency (every request streams its first
 * chunk at once and its last after `--latency` ms, in a process of its own), on a
 * real PostgreSQL queue and JSONL sessions. Per shape (workers x runs in flight):
 * throughput against the ideal (runs in flight / latency), the workers' CPU per job
 * (utime + stime from /proc, the model server excluded), and RSS per idle in-flight
 * run (peak RSS while every run waits on the model, minus the worker's RSS before,
 * over the runs in flight in that worker). Each worker first runs two warm-up jobs
 * (module loading, once per process), outside the measurement.
 *
 * Standalone: `node bench/src/concurrent-workers.mjs [--shapes 1x200,4x250] [--latency 2000]
 * [--store jsonl|postgres]` (after `tsc -b`; a shape is workers x concurrency; jobs =
 * workers x concurrency). `--store postgres` keeps the sessions in the queue's database
 * (`session: { store: "postgres" }`), as workers on several hosts would.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  closeQueue,
  openQueue,
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

function rssKiB(pid) {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line.split(/\s+/)[1]);
}

async function once(serverUrl, modelUrl, workers, concurrency, sessionStore = "jsonl") {
  const jobs = workers * concurrency;
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
    const completed = async () =>
      (await client.query(`SELECT count(*)::int AS n FROM ${QUEUE_SCHEMA}.job WHERE state = 'completed'`))
        .rows[0].n;
    // Warm-up: the first jobs of a process load the config, plugins and provider modules
    // (once per process); the measurement is of the steady state after them.
    await Promise.all(warmups.map((sessionId) => submitPrompt(boss, { sessionId, prompt: "warm up" })));
    while ((await completed()) < warmups.length) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const baseRss = children.map((c) => rssKiB(c.pid));
    const baseCpu = children.map((c) => cpuMs(c.pid));
    const started = now();
    startedAt = started;
    // In slices: a thousand sends at once would wait out the client pool's connect timeout.
    for (let i = 0; i < ids.length; i += 50)
      await Promise.all(
        ids.slice(i, i + 50).map((sessionId) => submitPrompt(boss, { sessionId, prompt: "go" })),
      );
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
    const perRunKiB = children.map((_, i) => (peakRss[i] - baseRss[i]) / concurrency);
    await closeQueue(boss);
    await client.end();
    return {
      workers,
      concurrency,
      jobs,
      seconds,
      submitSeconds: submitted,
      throughput: jobs / seconds,
      cpuPerJobMs: cpu / jobs,
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

/** Every shape once, side by side on one PostgreSQL and one model server. */
export async function benchConcurrentWorkers({
  shapes = [
    [1, 200],
    [4, 250],
  ],
  latency = 2000,
  store = "jsonl",
  log = () => {},
} = {}) {
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
      const row = await once(postgres.url, `http://127.0.0.1:${port}/v1`, workers, concurrency, store);
      row.store = store;
      row.ideal = (workers * concurrency) / (latency / 1000);
      log(JSON.stringify(row));
      rows.push(row);
    }
  } finally {
    server.kill();
    await postgres.stop();
  }
  return { latency, rows };
}

export function concurrentRows({ latency, rows }) {
  return [
    `| workers x runs in flight (model latency ${latency} ms) | runs/s (ideal) | of ideal | CPU per job | RSS per idle in-flight run | worker RSS before |`,
    "| --- | --- | --- | --- | --- | --- |",
    ...rows.map(
      (r) =>
        `| ${r.workers} x ${r.concurrency} (${r.jobs} runs) | ${r.throughput.toFixed(1)} (${r.ideal.toFixed(0)}) | ${((100 * r.throughput) / r.ideal).toFixed(0)} % | ${r.cpuPerJobMs.toFixed(1)} ms | ${(r.rssPerRunKiB / 1024).toFixed(2)} MiB | ${r.baseRssMiB.toFixed(0)} MiB |`,
    ),
  ].join("\n");
}

/** The `workers` rows of `pnpm bench`: each shape against the issue's three targets. */
export function workerBenchRows({ latency, rows }) {
  const met = (ok) => (ok ? "yes" : "**no**");
  return rows.flatMap((r) => {
    const shape = `${r.workers} worker${r.workers > 1 ? "s" : ""} x ${r.concurrency} runs in flight, model ${latency} ms`;
    const share = r.throughput / r.ideal;
    return [
      {
        group: "workers",
        name: `${shape}: throughput`,
        measured: `${r.throughput.toFixed(1)} runs/s (ideal ${r.ideal.toFixed(0)})`,
        ratio: `${(100 * share).toFixed(0)} %`,
        target: ">= 90 % of ideal",
        met: met(share >= 0.9),
      },
      {
        group: "workers",
        name: `${shape}: RSS per idle in-flight run`,
        measured: `${(r.rssPerRunKiB / 1024).toFixed(2)} MiB`,
        ratio: "",
        target: "<= 1 MiB",
        met: met(r.rssPerRunKiB <= 1024),
      },
      {
        group: "workers",
        name: `${shape}: CPU per job`,
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
    },
  });
  if (values.serve) serve(Number(values.serve));
  else {
    const shapes = (values.shapes ?? "1x200,4x250").split(",").map((s) => s.split("x").map(Number));
    const result = await benchConcurrentWorkers({
      shapes,
      latency: Number(values.latency ?? 2000),
      store: values.store ?? "jsonl",
      log: (line) => console.error(`[bench] ${line}`),
    });
    console.log(concurrentRows(result));
  }
}
