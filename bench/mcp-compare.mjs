/**
 * `rein mcp serve` before/after (issue 35): the same project served by two built
 * checkouts, interleaved with the direct client, over stdio and Streamable HTTP.
 *
 *   node --expose-gc bench/mcp-compare.mjs --before <built checkout> [--calls 200] [--reps 7]
 *   node bench/mcp-compare.mjs --profile <dir> [--http] [--calls 2000]   # --cpu-prof of the server
 *
 * Prints the medians per call, the overhead over the direct client and the
 * after/before ratio of the overheads, with the load average at start and end.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { interleave, median } from "./src/stats.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    before: { type: "string" },
    calls: { type: "string", default: "200" },
    reps: { type: "string", default: "7" },
    profile: { type: "string" },
    http: { type: "boolean", default: false },
  },
});
const calls = Number(values.calls);
const fromTools = createRequire(path.join(repo, "packages/plugins/tools-mcp/package.json"));
const { Client, StreamableHTTPClientTransport } = await import(
  fromTools.resolve("@modelcontextprotocol/client")
);
const { StdioClientTransport } = await import(fromTools.resolve("@modelcontextprotocol/client/stdio"));
const everything = fromTools.resolve("@modelcontextprotocol/server-everything/dist/index.js");
const TOKEN = "rein-bench-token";

function project(root) {
  const dist = (pkg) => path.join(root, "packages/plugins", pkg, "dist/index.js");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "rein-mcp-compare-"));
  const servers = { every: { command: process.execPath, args: [everything, "stdio"] } };
  const rules = { rules: [{ id: "echo", rule: "mcp__every__echo", decision: "allow" }] };
  fs.writeFileSync(
    path.join(dir, "rein.config.mjs"),
    `import mcp from ${JSON.stringify(dist("tools-mcp"))};
import policy from ${JSON.stringify(dist("plugin-policy"))};
import redact from ${JSON.stringify(dist("plugin-redact"))};
export default { model: { script: [] }, plugins: [[mcp, ${JSON.stringify({ servers })}], [policy, ${JSON.stringify(rules)}], redact] };
`,
  );
  const env = { ...process.env, NO_COLOR: "1", REIN_CONFIG_DIR: path.join(dir, ".cfg") };
  const cli = path.join(root, "packages/cli/dist/bin.js");
  execFileSync(process.execPath, [cli, "trust", "--yes"], {
    cwd: dir,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  return { dir, env, cli };
}

async function stdio(root, nodeArgs = []) {
  const { dir, env, cli } = project(root);
  const client = new Client({ name: "bench", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...nodeArgs, cli, "mcp", "serve"],
    cwd: dir,
    env,
    stderr: "ignore",
  });
  await client.connect(transport);
  return { client, pid: transport.pid, close: () => client.close() };
}

async function http(root, nodeArgs = []) {
  const { dir, env, cli } = project(root);
  const child = spawn(process.execPath, [...nodeArgs, cli, "mcp", "serve", "--http", "0"], {
    cwd: dir,
    env: { ...env, REIN_MCP_TOKEN: TOKEN },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on("close", resolve));
  while (!/listening on (\S+)/.test(stderr)) {
    if (child.exitCode !== null) throw new Error(stderr);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL(/listening on (\S+)/.exec(stderr)[1]);
  const client = new Client({ name: "bench", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  return {
    client,
    pid: child.pid,
    async close() {
      await client.close().catch(() => undefined);
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function callMany(client, name, n) {
  for (let i = 0; i < n; i++) {
    const result = await client.callTool({ name, arguments: { message: `ping ${i}` } });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  }
}

/** CPU time (user + system) of process `pid` in ms, from /proc (Linux): a load-robust measure. */
const cpuOf = (pid) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
};

const load = () =>
  os
    .loadavg()
    .map((value) => value.toFixed(1))
    .join(" ");

if (values.profile) {
  fs.mkdirSync(values.profile, { recursive: true });
  const served = await (values.http ? http : stdio)(repo, [
    "--cpu-prof",
    `--cpu-prof-dir=${path.resolve(values.profile)}`,
  ]);
  await callMany(served.client, "mcp__every__echo", 50);
  const start = performance.now();
  await callMany(served.client, "mcp__every__echo", calls);
  console.log(`${((performance.now() - start) / calls).toFixed(3)} ms/call, load ${load()}`);
  await served.close();
  process.exit(0);
}

const loadStart = load();
const direct = new Client({ name: "bench", version: "1.0.0" });
await direct.connect(
  new StdioClientTransport({ command: process.execPath, args: [everything, "stdio"], stderr: "ignore" }),
);
const contenders = [{ name: "direct", run: () => callMany(direct, "echo", calls) }];
const open = [];
const cpu = {};
const roots = [["after", repo], ...(values.before ? [["before", path.resolve(values.before)]] : [])];
for (const [label, root] of roots) {
  for (const [transport, start] of [
    ["stdio", stdio],
    ["http", http],
  ]) {
    const served = await start(root);
    open.push(served);
    const name = `${transport} ${label}`;
    cpu[name] = [];
    contenders.push({
      name,
      run: async () => {
        const before = cpuOf(served.pid);
        await callMany(served.client, "mcp__every__echo", calls);
        cpu[name].push((cpuOf(served.pid) - before) / calls);
      },
    });
  }
}
try {
  const timings = await interleave(contenders, { reps: Number(values.reps) });
  const per = (name) => timings[name].median / calls;
  console.log(`calls ${calls}, reps ${values.reps}, load ${loadStart} → ${load()}`);
  console.log(`direct ${per("direct").toFixed(3)} ms/call`);
  for (const transport of ["stdio", "http"]) {
    const after = per(`${transport} after`) - per("direct");
    let line = `${transport}: after ${per(`${transport} after`).toFixed(3)} ms/call (+${after.toFixed(3)})`;
    if (values.before) {
      const before = per(`${transport} before`) - per("direct");
      line += `, before ${per(`${transport} before`).toFixed(3)} (+${before.toFixed(3)}), overhead after/before ${(after / before).toFixed(2)}`;
    }
    const cpuLine = (label) => median(cpu[`${transport} ${label}`].slice(1)).toFixed(3);
    line += `; server CPU/call after ${cpuLine("after")} ms${values.before ? `, before ${cpuLine("before")} ms` : ""}`;
    console.log(line);
  }
} finally {
  await direct.close();
  for (const served of open) await served.close();
}
