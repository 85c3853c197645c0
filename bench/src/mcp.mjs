/**
 * MCP call overhead (benchmark 5): the same `echo` tool of the same real stdio
 * server (@modelcontextprotocol/server-everything, from tools-mcp's
 * devDependencies, never fetched) called
 * - directly, with the MCP SDK's `Client` (the floor);
 * - through Rein's gates: an `AgentHarness` (in-memory session) with
 *   @rein/tools-mcp, @rein/plugin-policy (an allow rule for the tool) and
 *   @rein/plugin-redact; each call passes validation, toolCall, toolGate, the
 *   MCP round trip and toolResult, measured alone (the target row) and inside a
 *   full harness turn (flat faux model, one tool call per turn);
 * - the same turn with an in-process echo: the turn's own cost;
 * - through `rein mcp serve` (the built CLI over stdio, same plugins), from the
 *   same SDK client: the latency Rein adds in front of an MCP client; and the
 *   same over Streamable HTTP (`rein mcp serve --http 0`, the SDK's
 *   `StreamableHTTPClientTransport` with the bearer token), upstream still stdio.
 * Each contender keeps its server running between reps (started untimed); a
 * rep is `calls` sequential calls, interleaved with the other contenders.
 */
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
import { interleave } from "./stats.mjs";

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const fromTools = createRequire(path.join(repo, "packages/plugins/tools-mcp/package.json"));
const dist = (pkg) => path.join(repo, "packages/plugins", pkg, "dist/index.js");
const CLI = path.join(repo, "packages/cli/dist/bin.js");

/** Loaded on first use, so `--only turns` needs none of it built. */
let modules;
async function load() {
  modules ??= {
    Client: (await import(fromTools.resolve("@modelcontextprotocol/client"))).Client,
    StdioClientTransport: (await import(fromTools.resolve("@modelcontextprotocol/client/stdio")))
      .StdioClientTransport,
    StreamableHTTPClientTransport: (await import(fromTools.resolve("@modelcontextprotocol/client")))
      .StreamableHTTPClientTransport,
    everything: fromTools.resolve("@modelcontextprotocol/server-everything/dist/index.js"),
    sdk: await import(path.join(repo, "packages/sdk/dist/index.js")),
    mcp: (await import(dist("tools-mcp"))).default,
    policy: (await import(dist("plugin-policy"))).default,
    redact: (await import(dist("plugin-redact"))).default,
  };
  return modules;
}

const serverOptions = () => ({
  servers: { every: { command: process.execPath, args: [modules.everything, "stdio"] } },
});
const policyOptions = { rules: [{ id: "echo", rule: "mcp__every__echo", decision: "allow" }] };

async function sdkClient(command, args, options = {}) {
  const client = new modules.Client({ name: "bench", version: "1.0.0" });
  await client.connect(new modules.StdioClientTransport({ command, args, stderr: "ignore", ...options }));
  return client;
}

const TOKEN = "rein-bench-token";

/** `rein mcp serve --http 0` (`cli`, in `cwd`) and an SDK client on it; `close` stops both. */
export async function httpServed(cli, cwd, env) {
  const child = spawn(process.execPath, [cli, "mcp", "serve", "--http", "0"], {
    cwd,
    env: { ...env, REIN_MCP_TOKEN: TOKEN },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise((resolve) => child.on("close", resolve));
  const started = Date.now();
  while (!/listening on (\S+)/.test(stderr)) {
    if (Date.now() - started > 60_000 || child.exitCode !== null)
      throw new Error(`rein mcp serve --http: no listener: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL(/listening on (\S+)/.exec(stderr)[1]);
  const client = new modules.Client({ name: "bench", version: "1.0.0" });
  await client.connect(
    new modules.StreamableHTTPClientTransport(url, {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  return {
    client,
    async close() {
      await client.close().catch(() => undefined);
      child.kill("SIGTERM");
      await exited;
    },
  };
}

async function callMany(client, name, calls) {
  for (let i = 0; i < calls; i++) {
    const result = await client.callTool({ name, arguments: { message: `ping ${i}` } });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  }
}

/** The same harness and plugins with an in-process echo tool instead of MCP: the turn's own cost. */
function localEcho() {
  return {
    name: "mcp__every__echo",
    description: "echo",
    parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
    risk: "read",
    execute: async (args) => ({ content: [{ type: "text", text: `Echo: ${args.message}` }] }),
  };
}

async function reinAgent(local = false) {
  const { sdk, mcp, policy, redact } = modules;
  const scripted = sdk.createScriptedModel();
  // Flat: the provider sees the prompt, the tools and the last message (the scripted model's collection).
  const flat = (model, context, options) =>
    scripted.models.streamSimple(model, { ...context, messages: context.messages.slice(-1) }, options);
  const harness = new AgentHarness({
    session: Session.create(new MemoryStorage()),
    model: scripted.model,
    streamFn: flat,
  });
  const tools = local ? [[localEcho()]] : [[mcp, serverOptions()]];
  const host = await sdk.loadPlugins(harness, [...tools, [policy, policyOptions], redact], {
    logger: () => {},
  });
  return { harness, host, scripted };
}

/**
 * The gates alone, no model turn: what the harness does per tool call
 * (`evaluateToolCall`: validation, toolCall, toolGate, default verdict; then the
 * tool's execute; then the toolResult waterfall, where redaction runs).
 */
async function gateCalls(agent, calls) {
  const { harness } = agent;
  const tool = harness.tools.find((candidate) => candidate.name === "mcp__every__echo");
  const signal = new AbortController().signal;
  for (let i = 0; i < calls; i++) {
    const args = { message: `ping ${i}` };
    const verdict = await modules.sdk.evaluateToolCall(
      harness,
      { name: tool.name, args, id: `g${i}` },
      { signal },
    );
    if (verdict.decision !== "allow") throw new Error(`gates: ${verdict.decision} by ${verdict.by}`);
    const info = {
      id: `g${i}`,
      name: tool.name,
      args: verdict.args,
      risk: tool.risk,
      tool,
      facts: verdict.facts,
    };
    const result = await tool.execute(verdict.args, {
      signal,
      update: () => {},
      cwd: harness.cwd,
      sessionId: harness.sessionId,
      toolCallId: info.id,
      facts: verdict.facts,
    });
    // The toolResult waterfall as the harness runs it (its runners are internal).
    const final = await harness.hooks.toolResult.promise(
      { ...result, isError: result.isError === true },
      harness.toolHookContext(signal, info),
    );
    if (final.isError) throw new Error(`gates: ${JSON.stringify(final.content)}`);
  }
}

async function reinCalls(agent, calls) {
  const steps = [];
  for (let i = 0; i < calls; i++)
    steps.push({ toolCalls: [{ name: "mcp__every__echo", args: { message: `ping ${i}` } }] });
  steps.push("done");
  agent.scripted.append(steps);
  const outcome = await agent.harness.prompt("go");
  const results = outcome.messages.filter((m) => m.role === "toolResult");
  if (outcome.status !== "completed" || results.length !== calls || results.some((r) => r.isError)) {
    throw new Error(
      `rein run: ${outcome.status}, ${results.length} results, errors: ${results.filter((r) => r.isError).length}`,
    );
  }
}

export async function benchMcp({ reps, scale, log }) {
  await load();
  const calls = Math.max(10, Math.round(200 * scale));
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "rein-bench-mcp-"));
  fs.writeFileSync(
    path.join(project, "rein.config.mjs"),
    `import mcp from ${JSON.stringify(dist("tools-mcp"))};
import policy from ${JSON.stringify(dist("plugin-policy"))};
import redact from ${JSON.stringify(dist("plugin-redact"))};
export default { model: { script: [] }, plugins: [[mcp, ${JSON.stringify(serverOptions())}], [policy, ${JSON.stringify(policyOptions)}], redact] };
`,
  );
  log(`mcp: starting servers (${calls} calls per rep, ${reps} reps)`);
  const direct = await sdkClient(process.execPath, [modules.everything, "stdio"]);
  const agent = await reinAgent();
  const local = await reinAgent(true);
  // Rein runs only trusted project code: the project is recorded once, as `rein trust` would.
  const env = { ...process.env, NO_COLOR: "1", REIN_CONFIG_DIR: path.join(project, ".bench-config") };
  execFileSync(process.execPath, [CLI, "trust", "--yes"], {
    cwd: project,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const served = await sdkClient(process.execPath, [CLI, "mcp", "serve"], { cwd: project, env });
  const servedHttp = await httpServed(CLI, project, env);
  try {
    const timings = await interleave(
      [
        { name: "direct", run: () => callMany(direct, "echo", calls) },
        { name: "gatesOnly", run: () => gateCalls(agent, calls) },
        { name: "gates", run: () => reinCalls(agent, calls) },
        { name: "local", run: () => reinCalls(local, calls) },
        { name: "serve", run: () => callMany(served, "mcp__every__echo", calls) },
        { name: "serveHttp", run: () => callMany(servedHttp.client, "mcp__every__echo", calls) },
      ],
      { reps },
    );
    const perCall = (name) => timings[name].median / calls;
    return {
      calls,
      direct: perCall("direct"),
      gatesOnly: perCall("gatesOnly"),
      gates: perCall("gates"),
      local: perCall("local"),
      serve: perCall("serve"),
      serveHttp: perCall("serveHttp"),
    };
  } finally {
    await direct.close();
    await served.close();
    await servedHttp.close();
    for (const each of [agent, local]) {
      await each.host.dispose();
      each.scripted.dispose();
    }
    fs.rmSync(project, { recursive: true, force: true });
  }
}

const ms = (value) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;

export function mcpRows({ calls, direct, gatesOnly, gates, local, serve, serveHttp }) {
  const group = `5. MCP: ${calls} sequential calls of server-everything's echo over stdio`;
  const ratio = gatesOnly / direct;
  return [
    { group, name: "MCP SDK client, direct", measured: `${ms(direct)}/call`, ratio: "", target: "", met: "" },
    {
      group,
      name: "Rein's gates (validation, toolCall, toolGate: policy, toolResult: redact) + tools-mcp",
      measured: `${ms(gatesOnly)}/call`,
      ratio: `${ratio.toFixed(2)}× direct`,
      target: "≤ 1.20×",
      met: ratio <= 1.2 ? "yes" : "**no**",
    },
    {
      group,
      name: "the same in a full harness turn (scripted model, events, session)",
      measured: `${ms(gates)}/call`,
      ratio: `${(gates / direct).toFixed(2)}× direct`,
      target: "",
      met: "",
    },
    {
      group,
      name: "the same Rein turn with an in-process echo (no MCP): the turn's own cost",
      measured: `${ms(local)}/call`,
      ratio: `MCP part of the Rein call: ${ms(gates - local)} vs ${ms(direct)} direct`,
      target: "",
      met: "",
    },
    ...[
      ["`rein mcp serve` (stdio) in front of the same server", serve],
      ["`rein mcp serve --http` (Streamable HTTP) in front of the same server", serveHttp],
    ].map(([name, value]) => ({
      group,
      name,
      measured: `${ms(value)}/call, ${ms(value - direct)} added`,
      ratio: `${(value / direct).toFixed(2)}× direct`,
      target: "≤ +0.30 ms",
      met: value - direct <= 0.3 ? "yes" : "**no**",
    })),
  ];
}
