import path from "node:path";
import { createRequire } from "node:module";
import { streamSimple } from "@mariozechner/pi-ai";
import { AgentHarness, MemoryStorage, Session } from "@rein/harness";
const repo = path.resolve("..");
const req = createRequire(path.join(repo, "packages/plugins/tools-mcp/package.json"));
const everything = req.resolve("@modelcontextprotocol/server-everything/dist/index.js");
const sdk = await import(path.join(repo, "packages/sdk/dist/index.js"));
const mcp = (await import(path.join(repo, "packages/plugins/tools-mcp/dist/index.js"))).default;
const N = 100;
async function agent(flat) {
  const scripted = sdk.createScriptedModel();
  const harness = new AgentHarness({ session: Session.create(new MemoryStorage()), model: scripted.model,
    ...(flat ? { streamFn: (m, c, o) => streamSimple(m, { ...c, messages: c.messages.slice(-1) }, o) } : {}) });
  const host = await sdk.loadPlugins(harness, [[mcp, { servers: { every: { command: process.execPath, args: [everything, "stdio"] } } }]], { logger: () => {} });
  return { harness, host, scripted };
}
async function run(a) {
  const steps = []; for (let i = 0; i < N; i++) steps.push({ toolCalls: [{ name: "mcp__every__echo", args: { message: `p${i}` } }] }); steps.push("done");
  a.scripted.append(steps);
  const t = performance.now(); await a.harness.prompt("go"); return ((performance.now() - t) / N).toFixed(2);
}
const a = await agent(true);
for (let r = 0; r < 3; r++) console.log("harness+mcp flat", await run(a), "ms/call");
await a.host.dispose(); a.scripted.dispose();
process.exit(0);
