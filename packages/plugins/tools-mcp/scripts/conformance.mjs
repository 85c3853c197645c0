#!/usr/bin/env node
/**
 * Runs the MCP conformance suite's server scenarios against `rein mcp serve --http`.
 *
 * Usage (from the repository root, after `pnpm build`):
 *   node packages/plugins/tools-mcp/scripts/conformance.mjs <conformance bin> [scenario...]
 * where <conformance bin> is the `conformance` executable of
 * @modelcontextprotocol/conformance 0.1.16 (needs Node 22+, as Rein does), installed
 * anywhere, e.g.
 *   npm install --prefix /tmp/conformance @modelcontextprotocol/conformance@0.1.16
 *   node packages/plugins/tools-mcp/scripts/conformance.mjs /tmp/conformance/node_modules/.bin/conformance
 *
 * A throwaway project is served: @rein/tools-mcp with server-everything (from this
 * package's devDependencies) behind @rein/plugin-policy. The suite cannot send the
 * bearer token `rein mcp serve --http` requires, so a proxy on 127.0.0.1 adds it;
 * nothing leaves the machine. The proxy maps its own Host to the listener's and
 * passes any other Host (and every Origin) through unchanged, so the suite's
 * DNS-rebinding scenario reaches Rein's own checks.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [conformance, ...scenarios] = process.argv.slice(2);
if (!conformance) {
  console.error("usage: conformance.mjs <path to the conformance bin> [scenario...]");
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..", "..", "..");
const require = createRequire(path.join(here, "..", "package.json"));
const everything = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
const dist = (pkg) => path.join(repo, "packages/plugins", pkg, "dist/index.js");

const project = fs.mkdtempSync(path.join(os.tmpdir(), "rein-conformance-"));
fs.writeFileSync(
  path.join(project, "rein.config.mjs"),
  `import mcp from ${JSON.stringify(dist("tools-mcp"))};
import policy from ${JSON.stringify(dist("plugin-policy"))};
export default {
  model: { script: [] },
  plugins: [
    [mcp, { servers: { every: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(everything)}, "stdio"] } } }],
    [policy, { rules: [{ rule: "mcp__every__*", decision: "allow" }] }],
  ],
};
`,
);
const token = randomBytes(18).toString("base64url");
const serve = spawn(
  process.execPath,
  [path.join(repo, "packages/cli/dist/bin.js"), "mcp", "serve", "--http", "0"],
  {
    cwd: project,
    env: { ...process.env, REIN_MCP_TOKEN: token, NO_COLOR: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  },
);
const upstream = await new Promise((resolve, reject) => {
  let err = "";
  serve.stderr.on("data", (chunk) => {
    err += chunk;
    const found = /listening on (http:\/\/\S+)/.exec(err);
    if (found) resolve(new URL(found[1]));
  });
  serve.once("exit", (code) => reject(new Error(`rein mcp serve exited ${code}: ${err}`)));
});
let proxyHosts = new Set();
const proxy = http.createServer((req, res) => {
  const host = proxyHosts.has(req.headers.host) ? upstream.host : req.headers.host;
  const forward = http.request(
    {
      host: upstream.hostname,
      port: upstream.port,
      path: req.url,
      method: req.method,
      headers: { ...req.headers, host, authorization: `Bearer ${token}` },
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on("error", () => res.destroy());
  req.pipe(forward);
});
await new Promise((resolve) => proxy.listen(0, "127.0.0.1", resolve));
proxyHosts = new Set([`127.0.0.1:${proxy.address().port}`, `localhost:${proxy.address().port}`]);
const url = `http://127.0.0.1:${proxy.address().port}${upstream.pathname}`;
const list = scenarios.length > 0 ? scenarios : listServerScenarios();
const results = [];
// A few scenarios at a time: a failing one waits for the suite's request timeout.
const queue = [...list];
await Promise.all(
  Array.from({ length: 4 }, async () => {
    for (let scenario = queue.shift(); scenario !== undefined; scenario = queue.shift()) {
      const run = await runScenario(scenario);
      if (process.env.VERBOSE) console.log(run.output);
      const row = [scenario, run.status === 0 ? "pass" : "fail", summary(run.output)];
      results.push(row);
      console.log(`${row[1].padEnd(4)} ${scenario.padEnd(32)} ${row[2]}`);
    }
  }),
);
console.log(`${results.filter((r) => r[1] === "pass").length} of ${results.length} server scenarios pass`);
serve.kill("SIGTERM");
proxy.close();
fs.rmSync(project, { recursive: true, force: true });

function runScenario(scenario) {
  return new Promise((resolve) => {
    const child = spawn(conformance, ["server", "--url", url, "--scenario", scenario], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.once("close", (status) => resolve({ status, output }));
  });
}

function listServerScenarios() {
  const out = spawnSync(conformance, ["list", "--server"], { encoding: "utf8" }).stdout;
  return out
    .split("\n")
    .flatMap((line) => (/^\s+-\s+(\S+)/.exec(line)?.[1] ? [/^\s+-\s+(\S+)/.exec(line)[1]] : []));
}

/** The suite's counts line, or its first failure. */
function summary(text) {
  const plain = text.replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g"), "");
  const lines = plain.split("\n").map((l) => l.trim());
  const failure = lines.find((l) => /FAIL|✗|Error/.test(l));
  const counts = lines.find((l) => /passed|failed/i.test(l));
  return (failure ?? counts ?? lines.filter(Boolean).at(-1) ?? "").slice(0, 110);
}
