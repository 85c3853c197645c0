/**
 * Every config key has a reload decision, and `rein dev`'s reload keeps it: a key
 * the wiring applies live is applied (and returns to its default when removed);
 * a key that needs a restart is reported with its reason, and the chat says so.
 * The cases are generated from the config table: a key without a sample here is
 * a compile error (the mapped type) and a failing test (the key list).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONFIG_KEYS, type ConfigKeyName, type ReinConfig } from "@rein/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type Agent, buildAgent } from "../src/agent/build-agent.js";
import { CONFIG_WIRING } from "../src/agent/config-wiring.js";
import { liveReload } from "../src/agent/live-reload.js";
import { reloadAgent } from "../src/agent/reload.js";
import { colorsFor, type Terminal } from "../src/ui/terminal.js";

/**
 * Each key: a value to reload with and, for a live key, what the running agent
 * shows of it (`observe`) and what that must be once the value is applied (`shows`).
 */
const SAMPLES: {
  [K in ConfigKeyName]-?: {
    value: NonNullable<ReinConfig[K]>;
    observe?: (agent: Agent) => unknown;
    shows?: unknown;
  };
} = {
  model: { value: { script: ["another reply"] } },
  models: { value: [{ id: "local", baseUrl: "http://127.0.0.1:9/v1" }] },
  plugins: {
    value: ["@rein/tools-shell", ["@rein/plugin-policy", { rules: [] }]],
    observe: (agent) => agent.host.plugins.map((p) => p.name),
    shows: ["@rein/tools-shell", "policy"],
  },
  tools: { value: { active: [] }, observe: (agent) => agent.harness.activeToolNames, shows: [] },
  session: { value: { dir: "elsewhere" } },
  systemPrompt: { value: "Be brief.", observe: (agent) => agent.instructions.base, shows: "Be brief." },
  instructions: { value: { enabled: false } },
  thinkingLevel: { value: "high", observe: (agent) => agent.harness.thinkingLevel, shows: "high" },
  compaction: {
    value: { reserveTokens: 1234 },
    observe: (agent) => agent.harness.compactionSettings,
    shows: expect.objectContaining({ enabled: true, reserveTokens: 1234 }),
  },
  mcpServe: { value: { hideDenied: true } },
  retry: {
    value: { maxAttempts: 7, baseDelayMs: 5 },
    observe: (agent) => agent.harness.retrySettings,
    shows: expect.objectContaining({ enabled: true, maxAttempts: 7, baseDelayMs: 5 }),
  },
  decisions: { value: { trail: true }, observe: (agent) => agent.harness.decisions, shows: { trail: true } },
  approvals: { value: { park: true }, observe: (agent) => agent.harness.onUnanswered, shows: "park" },
};

const BASE: ReinConfig = { model: { script: [] }, plugins: ["@rein/tools-shell"] };
let root: string;
let cwd: string;
const write = (config: ReinConfig) =>
  writeFileSync(join(cwd, "rein.config.json"), `${JSON.stringify(config, null, 2)}\n`);

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "rein-config-reload-"));
  cwd = root;
  vi.stubEnv("REIN_CONFIG_DIR", join(root, "user"));
  vi.stubEnv("REIN_MANAGED_CONFIG", join(root, "managed.json"));
  vi.stubEnv("REIN_TRUST_PROJECT", "1");
});
afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(root, { recursive: true, force: true });
});

async function agentOn(config: ReinConfig): Promise<Agent> {
  write(config);
  return buildAgent({ cwd, ephemeral: true });
}

describe("rein dev's reload, key by key from the config table", () => {
  it("every key of the table has a sample here and a reload decision in the wiring", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...CONFIG_KEYS].sort());
    expect(Object.keys(CONFIG_WIRING).sort()).toEqual([...CONFIG_KEYS].sort());
    for (const key of CONFIG_KEYS) {
      const rule = CONFIG_WIRING[key].reload;
      // A live key is observable on the agent; a restart says why.
      if ("restart" in rule) expect(rule.restart.length, key).toBeGreaterThan(10);
      else {
        expect(SAMPLES[key].observe, `${key} needs an observe`).toBeTypeOf("function");
        expect(SAMPLES[key].shows, `${key} needs what it shows`).toBeDefined();
      }
    }
  });

  it.each(CONFIG_KEYS)("%s: applied by the reload, or reported as needing a restart", async (key) => {
    const sample = SAMPLES[key];
    const rule = CONFIG_WIRING[key].reload;
    const agent = await agentOn(BASE);
    try {
      const before = sample.observe?.(agent);
      const changed: ReinConfig = { ...BASE, [key]: sample.value };
      write(changed);
      const report = await reloadAgent(agent, { cwd });
      if ("restart" in rule) {
        expect(report.restart).toEqual([{ key, reason: rule.restart }]);
        return;
      }
      expect(report.restart).toEqual([]);
      const after = sample.observe?.(agent);
      expect(after).not.toEqual(before);
      expect(after).toEqual(sample.shows);
      // Removed again: back to what the agent started with (the default).
      write(BASE);
      const back = await reloadAgent(agent, { cwd });
      expect(back.restart).toEqual([]);
      expect(sample.observe?.(agent)).toEqual(before);
    } finally {
      await agent.dispose();
    }
  });

  it("the chat says which changed keys need a restart, and why", async () => {
    const agent = await agentOn(BASE);
    let said = "";
    const say = (text: string) => {
      said += text;
      return true;
    };
    const err = { write: say } as unknown as NodeJS.WriteStream;
    const term: Terminal = { out: err, err, c: colorsFor(err), co: colorsFor(err), interactive: false };
    const live = liveReload(agent, { cwd }, term, { watch: false });
    try {
      write({ ...BASE, model: { script: ["x"] }, session: { dir: "elsewhere" }, retry: { maxAttempts: 2 } });
      await live.reload();
      expect(said).toContain("↻ reloaded");
      expect(said).toContain("the model changed in the config: restart to use it");
      const rule = CONFIG_WIRING.session.reload;
      expect("restart" in rule).toBe(true);
      expect(said).toContain(
        `session changed in the config: restart to use it (${"restart" in rule ? rule.restart : ""})`,
      );
      expect(said).not.toContain("retry changed");
      expect(agent.harness.retrySettings.maxAttempts).toBe(2);
    } finally {
      live.close();
      await agent.dispose();
    }
  });
});
