/**
 * The CLI's half of the config table (`CONFIG_TABLE` of @rein/sdk holds each
 * key's type, schema and merge rule): for every key, the command-line flags that
 * write it, the harness options it sets when an agent is built
 * (build-agent.ts), and what `rein dev`'s reload (reload.ts) does with a change:
 * applies it live, or reports that it needs a restart and why.
 *
 * Invariant: `CONFIG_WIRING` is a mapped type over the table's keys, so a key
 * added to the table without a reload decision here is a compile error (and the
 * per-key reload test, config-reload.test.ts, is generated from this object).
 */
import type { AgentHarness, AgentHarnessOptions } from "@rein/harness";
import type { ConfigKeyName, ReinConfig } from "@rein/sdk";
import type { Agent } from "./build-agent.js";

/** What a live reload hands each key's applier. */
export interface ReloadTarget {
  agent: Agent;
  /** A harness built with no options: the defaults a key removed from the config returns to. */
  defaults: AgentHarness;
}

export type ReloadRule<K extends ConfigKeyName> =
  /** Applied by the reload; `value` is undefined when the key was removed (back to the default). */
  | { live(value: ReinConfig[K], target: ReloadTarget): void }
  /** Not applied: the reload says the key changed and needs a restart, and why. */
  | { restart: string };

export interface KeyWiring<K extends ConfigKeyName> {
  /** The command-line flags (`rein run`, `rein dev`, `rein config`) that write this key (config/cli-flags.ts). */
  flags?: readonly string[];
  /** The harness options the value sets when an agent is built (absent: the CLI reads it elsewhere). */
  harness?(value: NonNullable<ReinConfig[K]>): Partial<AgentHarnessOptions>;
  reload: ReloadRule<K>;
}

export const CONFIG_WIRING: { [K in ConfigKeyName]-?: KeyWiring<K> } = {
  model: {
    flags: ["--model"],
    reload: { restart: "the running conversation keeps its model; restart to use the new one" },
  },
  models: {
    reload: { restart: "custom models are resolved with the model when the agent starts" },
  },
  plugins: {
    flags: ["--allow", "--ask", "--deny", "--permission-mode", "--sandbox"],
    // reload.ts loads the new stack on a scratch harness first, then swaps it in.
    reload: { live() {} },
  },
  tools: {
    reload: { live: (value, { agent }) => agent.harness.setActiveTools(value?.active) },
  },
  session: {
    reload: { restart: "the open session stays where it is; restart to use another store or folder" },
  },
  systemPrompt: {
    // The system prompt stays the instructions' function (AGENTS.md); only its base changes.
    reload: {
      live: (value, { agent }) => {
        agent.instructions.base = value ?? "";
      },
    },
  },
  instructions: {
    reload: {
      restart: "AGENTS.md files are found and watched from the session's start; restart to load or drop them",
    },
  },
  thinkingLevel: {
    harness: (thinkingLevel) => ({ thinkingLevel }),
    reload: {
      live: (value, { agent, defaults }) => {
        const level = value ?? defaults.thinkingLevel;
        // Each change is a session entry: only a real one is written.
        if (level !== agent.harness.thinkingLevel) agent.harness.setThinkingLevel(level);
      },
    },
  },
  compaction: {
    harness: (compaction) => ({ compaction }),
    reload: {
      live: (value, { agent, defaults }) =>
        agent.harness.setCompactionSettings({ ...defaults.compactionSettings, ...value }),
    },
  },
  mcpServe: {
    reload: { restart: "read by rein mcp serve when it starts, not by a chat" },
  },
  retry: {
    harness: (retry) => ({ retry }),
    reload: {
      live: (value, { agent, defaults }) =>
        agent.harness.setRetrySettings({ ...defaults.retrySettings, ...value }),
    },
  },
  decisions: {
    harness: (decisions) => ({ decisions }),
    reload: { live: (value, { agent }) => agent.harness.setDecisions({ trail: value?.trail === true }) },
  },
  approvals: {
    harness: (approvals) => (approvals.park === true ? { onUnanswered: "park" } : {}),
    reload: {
      live: (value, { agent }) => agent.harness.setOnUnanswered(value?.park === true ? "park" : "deny"),
    },
  },
};

/** The harness options a config sets, key by key from the wiring. */
export function harnessOptions(config: ReinConfig): Partial<AgentHarnessOptions> {
  const options: Partial<AgentHarnessOptions> = {};
  for (const [key, wiring] of Object.entries(CONFIG_WIRING) as [ConfigKeyName, KeyWiring<ConfigKeyName>][]) {
    const value = config[key];
    if (value !== undefined && wiring.harness) Object.assign(options, wiring.harness(value as never));
  }
  return options;
}
