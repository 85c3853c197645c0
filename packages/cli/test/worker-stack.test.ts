/**
 * A worker's shared stack (worker/worker-stack.ts): what does not depend on the job
 * (config, model, plugins, store) is built once per process; what belongs to a
 * session (harness, session, plugin setup, a scripted model) never is; an edit to
 * a file the stack rests on applies from the next job, a broken one fails the job
 * and never falls back to the stack built before it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type Agent, buildAgent, type SharedStack } from "../src/agent/build-agent.js";
import { WorkerStack } from "../src/worker/worker-stack.js";

let root: string;
const agents: Agent[] = [];

const config = (body: string) => writeFileSync(join(root, "rein.config.ts"), `export default ${body};\n`);
const plugin = (tool: string) =>
  writeFileSync(
    join(root, "tools.ts"),
    `import { definePlugin, defineTool, Type } from "@rein/sdk";
export default definePlugin({
  name: "stack-tools",
  setup(rein) {
    rein.registerTool(defineTool({
      name: "${tool}", description: "echo", parameters: Type.Object({}), risk: "read",
      execute: async () => ({ content: [{ type: "text", text: "x" }] }),
    }));
  },
});
`,
  );
const ENDPOINT = `model: "local", models: [{ id: "local", baseUrl: "http://127.0.0.1:9/v1" }], plugins: ["./tools.ts"]`;

async function agentOn(shared: SharedStack): Promise<Agent> {
  const agent = await buildAgent({ cwd: root, shared });
  agents.push(agent);
  return agent;
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "rein-worker-stack-"));
  vi.stubEnv("REIN_CONFIG_DIR", join(root, "user"));
  vi.stubEnv("REIN_MANAGED_CONFIG", join(root, "managed.json"));
  vi.stubEnv("REIN_TRUST_PROJECT", "1");
  plugin("echo");
});
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.dispose();
  vi.unstubAllEnvs();
  rmSync(root, { recursive: true, force: true });
});

describe("worker stack", () => {
  it("is built once while its files are unchanged, and shares nothing that belongs to a session", async () => {
    config(`{ ${ENDPOINT}, systemPrompt: "A" }`);
    const stack = new WorkerStack({ cwd: root, configPath: undefined });
    const shared = await stack.get();
    expect(await stack.get()).toBe(shared);
    expect(stack.builds).toBe(1);
    const [one, two] = [await agentOn(shared), await agentOn(shared)];
    // Shared: the config, the plugins' modules, the provider collection.
    expect(one.loaded).toBe(shared.loaded);
    expect(two.plugins).toBe(shared.plugins);
    expect(one.model.models).toBe(two.model.models);
    // Per session: harness, session, plugin setup, request options.
    expect(one.harness).not.toBe(two.harness);
    expect(one.session.id).not.toBe(two.session.id);
    expect(one.host).not.toBe(two.host);
    expect(one.model.requestOptions).not.toBe(two.model.requestOptions);
    expect(one.harness.tools.map((tool) => tool.name)).toContain("echo");
    await stack.close();
  });

  it("applies an edited config and plugin from the next job; a run in flight keeps its stack", async () => {
    config(`{ ${ENDPOINT}, systemPrompt: "A" }`);
    const stack = new WorkerStack({ cwd: root, configPath: undefined });
    const before = await stack.get();
    const running = await agentOn(before);
    config(`{ ${ENDPOINT}, systemPrompt: "B" }`);
    plugin("echo2");
    const after = await stack.get();
    expect(after).not.toBe(before);
    expect(stack.builds).toBe(2);
    expect(after.loaded.config.systemPrompt).toBe("B");
    expect(before.loaded.config.systemPrompt).toBe("A");
    const next = await agentOn(after);
    expect(next.harness.tools.map((tool) => tool.name)).toContain("echo2");
    expect(running.harness.tools.map((tool) => tool.name)).toContain("echo");
    expect(running.harness.tools.map((tool) => tool.name)).not.toContain("echo2");
    await stack.close();
  });

  it("fails the job on a broken edit and never falls back to the stack before it", async () => {
    config(`{ ${ENDPOINT} }`);
    const stack = new WorkerStack({ cwd: root, configPath: undefined });
    await stack.get();
    config(`{ ${ENDPOINT}, retry: { maxAttempts: "many" } }`);
    await expect(stack.get()).rejects.toMatchObject({ code: "config" });
    // Still broken: the next job fails too (no cached old stack).
    await expect(stack.get()).rejects.toMatchObject({ code: "config" });
    config(`{ ${ENDPOINT}, systemPrompt: "fixed" }`);
    expect((await stack.get()).loaded.config.systemPrompt).toBe("fixed");
    await stack.close();
  });

  it("resolves a scripted model per run: its replies are consumed per session", async () => {
    config(`{ model: { script: ["hi"] }, plugins: ["./tools.ts"] }`);
    const stack = new WorkerStack({ cwd: root, configPath: undefined });
    const shared = await stack.get();
    expect(shared.model).toBeUndefined();
    const [one, two] = [await agentOn(shared), await agentOn(shared)];
    expect(one.model.scripted).toBeDefined();
    expect(one.model.scripted).not.toBe(two.model.scripted);
    expect((await one.harness.prompt("go")).status).toBe("completed");
    // The second session's script is untouched by the first's run.
    expect((await two.harness.prompt("go")).status).toBe("completed");
    expect(two.session.entries().some((entry) => JSON.stringify(entry).includes('"hi"'))).toBe(true);
    await stack.close();
  });
});
