/**
 * The config table: every key of `rein.config.ts`, its TypeScript type, its
 * schema (what the CLI validates, with the words each failure is reported in)
 * and how layers merge it. `ReinConfig` is derived from this table; the CLI's
 * half (`@rein/cli`'s config/config-wiring.ts: flags, harness wiring, reload) is
 * a mapped type over its keys, so a key added here without wiring there is a
 * compile error.
 *
 * Schema annotations the CLI's validator reads: `expected` (what a value should
 * be, in words: "a boolean") on any node, `unknownKey` (what a key should be:
 * "one of enabled, reserveTokens") on a closed object.
 */
import { THINKING_LEVELS, type ThinkingLevel } from "@rein/harness";
import { type TSchema, Type } from "typebox";
import type { CustomModelConfig, PluginEntry } from "./config.js";
import type { ScriptStep } from "./scripted-model.js";

/**
 * How a key's values from several layers meet (lowest precedence first: user,
 * project, local, flags, managed): `replace` - the highest layer's value whole;
 * `deep` - plain objects per key, arrays concatenated (the higher layer's items
 * first), the `replaced` sub-keys whole; `plugins` - every layer's entries pooled
 * (`resolvePlugins` merges one plugin's options across layers).
 */
export type MergeRule = "replace" | "deep" | "plugins";

/** One key of the table. `T` is the key's type in `ReinConfig` (never present at run time). */
export interface ConfigKeySpec<T = unknown> {
  schema: TSchema;
  merge: MergeRule;
  /** Sub-keys (`active` of `tools`) replaced whole under `deep`, never merged. */
  replaced?: readonly string[];
  /**
   * A rule the schema cannot say (one field depending on another); returns the
   * problem at `path` (relative to the key: `url`), or nothing.
   */
  refine?(value: T): { path: string; expected: string; shown?: unknown } | undefined;
  /** The key's type, for `ReinConfig` only. */
  readonly type?: T;
}

const spec = <T>(entry: Omit<ConfigKeySpec<T>, "type">): ConfigKeySpec<T> => entry;
const bool = (options: { expected?: string } = {}) => Type.Boolean({ expected: "a boolean", ...options });
const closed = (
  properties: Parameters<typeof Type.Object>[0],
  expected: string,
  unknownKey = `one of ${Object.keys(properties).join(", ")}`,
) => Type.Object(properties, { additionalProperties: false, expected, unknownKey });

/** The wire protocols a custom `models[]` entry may speak: pi-ai's chat APIs with a `.lazy` module. */
export const CUSTOM_MODEL_APIS = [
  "openai-completions",
  "openai-responses",
  "anthropic-messages",
  "google-generative-ai",
  "mistral-conversations",
  "bedrock-converse-stream",
  "azure-openai-responses",
] as const;

const optional = Type.Optional;
const positiveInteger = () => optional(Type.Integer({ exclusiveMinimum: 0, expected: "a positive integer" }));
const text = () => optional(Type.String({ expected: "a string" }));
const catalogue = () => optional(Type.Object({}, { expected: "an object (pi-ai's catalogue fields)" }));
const dollars = () =>
  optional(Type.Number({ minimum: 0, expected: "dollars per million tokens (a number >= 0)" }));

const customModel = Type.Object(
  {
    id: Type.String({ minLength: 1, expected: "a non-empty string" }),
    baseUrl: Type.String({ pattern: "^https?://", expected: "an http(s) URL" }),
    contextWindow: positiveInteger(),
    maxTokens: positiveInteger(),
    api: optional(
      Type.Union(
        CUSTOM_MODEL_APIS.map((api) => Type.Literal(api)),
        { expected: `one of ${CUSTOM_MODEL_APIS.join(", ")}` },
      ),
    ),
    provider: text(),
    name: text(),
    apiKeyEnv: text(),
    compat: catalogue(),
    thinkingLevelMap: optional(
      Type.Object(
        Object.fromEntries(
          THINKING_LEVELS.map((level) => [
            level,
            optional(Type.Union([Type.String(), Type.Null()], { expected: "a string or null" })),
          ]),
        ),
        {
          additionalProperties: false,
          expected: "an object (pi-ai's catalogue fields)",
          unknownKey: `a thinking level (${THINKING_LEVELS.join(", ")})`,
        },
      ),
    ),
    input: optional(
      Type.Array(Type.Union([Type.Literal("text"), Type.Literal("image")]), {
        minItems: 1,
        contains: Type.Literal("text"),
        expected: '["text"] or ["text", "image"]',
      }),
    ),
    temperature: optional(Type.Number({ minimum: 0, maximum: 2, expected: "a number from 0 to 2" })),
    reasoning: optional(bool()),
    cost: optional(
      closed(
        { input: dollars(), output: dollars(), cacheRead: dollars(), cacheWrite: dollars() },
        "{ input?, output?, cacheRead?, cacheWrite? } in dollars per million tokens",
      ),
    ),
  },
  { expected: "{ id, baseUrl, api?, contextWindow? }" },
);

/** A connection string may carry a password: never echo it. */
const hidePassword = (url: unknown) =>
  typeof url === "string" ? url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@") : url;

/**
 * The table. Order is the order keys are checked and shown in. The doc comment
 * on each key is what an editor shows for it in `defineConfig({ ... })`.
 */
export const CONFIG_TABLE = {
  /** `provider/id` from pi-ai or a custom model; or a scripted model for offline runs. */
  model: spec<string | { script: ScriptStep[] }>({
    schema: Type.Union([Type.String(), Type.Object({ script: Type.Array(Type.Unknown()) })], {
      expected: '"provider/id", a custom model id, or { script: [...] }',
    }),
    merge: "replace",
  }),
  /** Custom models: OpenAI-compatible (or other pi-ai API) endpoints, referred to by `model`. */
  models: spec<CustomModelConfig[]>({
    schema: Type.Array(customModel, { expected: "an array of custom models" }),
    merge: "deep",
  }),
  /** Loaded in this order; the order is also tap order within a stage. */
  plugins: spec<PluginEntry[]>({
    schema: Type.Array(
      Type.Union(
        [
          Type.String(),
          Type.Object({}),
          // [specifier, options], [plugin, options] or a tool pack.
          Type.Array(Type.Unknown(), { prefixItems: [Type.Union([Type.String(), Type.Object({})])] }),
        ],
        {
          expected: 'a package name, a "./path.ts", [specifier, options], a plugin object or a tool array',
        },
      ),
      { expected: "an array of plugin entries" },
    ),
    merge: "plugins",
  }),
  tools: spec<{
    /** The tools the model sees; default every registered tool. */
    active?: string[];
  }>({
    schema: closed(
      { active: optional(Type.Array(Type.String(), { expected: "an array of tool names" })) },
      "{ active?: string[] }",
    ),
    merge: "deep",
    // Pooling the lists would let a lower layer re-activate a tool a higher one left out.
    replaced: ["active"],
  }),
  session: spec<{
    /** Where JSONL sessions are kept. Default `.rein/sessions`. */
    dir?: string;
    /** `jsonl` (default) or `postgres` (needs `url` and the @rein/store-postgres package). */
    store?: "jsonl" | "postgres";
    /** The PostgreSQL connection string (`postgres://...`) of `store: "postgres"`. */
    url?: string;
  }>({
    schema: closed(
      {
        dir: optional(Type.String({ expected: "a folder (string)" })),
        store: optional(
          Type.Union([Type.Literal("jsonl"), Type.Literal("postgres")], {
            expected: '"jsonl" or "postgres"',
          }),
        ),
        url: optional(Type.Unknown()),
      },
      '{ dir?: string, store?: "jsonl" | "postgres", url?: string }',
    ),
    merge: "deep",
    refine: ({ store, url }) => {
      if (store === "postgres" && !(typeof url === "string" && /^postgres(ql)?:\/\//.test(url)))
        return {
          path: "url",
          expected: 'a postgres:// connection string (session.store is "postgres")',
          shown: hidePassword(url),
        };
      if (store !== "postgres" && url !== undefined)
        return {
          path: "url",
          expected: 'nothing unless session.store is "postgres"',
          shown: hidePassword(url),
        };
      return undefined;
    },
  }),
  systemPrompt: spec<string>({
    schema: Type.String({ expected: "a string" }),
    merge: "replace",
  }),
  /**
   * Project instructions: `AGENTS.md` (or `CLAUDE.md`) files from the project root down
   * to the working directory, and nested ones as tools touch their folders, join the
   * system prompt. `enabled: false` loads none. Default true.
   */
  instructions: spec<{ enabled?: boolean }>({
    schema: closed(
      { enabled: optional(bool()) },
      "{ enabled?: boolean }",
      "absent (the only option is enabled)",
    ),
    merge: "deep",
  }),
  thinkingLevel: spec<ThinkingLevel>({
    schema: Type.Union(
      THINKING_LEVELS.map((level) => Type.Literal(level)),
      { expected: `one of ${THINKING_LEVELS.join(", ")}` },
    ),
    merge: "replace",
  }),
  /** Automatic compaction: `enabled` (default true), `reserveTokens` (16 384), `keepRecentTokens` (20 000). */
  compaction: spec<{ enabled?: boolean; reserveTokens?: number; keepRecentTokens?: number }>({
    schema: closed(
      {
        enabled: optional(bool()),
        reserveTokens: optional(Type.Integer({ minimum: 0, expected: "a non-negative integer" })),
        keepRecentTokens: optional(Type.Integer({ minimum: 0, expected: "a non-negative integer" })),
      },
      "{ enabled?, reserveTokens?, keepRecentTokens? }",
    ),
    merge: "deep",
  }),
  /**
   * `rein mcp serve`: `hideDenied` leaves tools the gates deny outright out of `tools/list`;
   * `allowedOrigins` (`scheme://host[:port]`) are browser origins `--http` accepts besides loopback ones.
   */
  mcpServe: spec<{ hideDenied?: boolean; allowedOrigins?: string[] }>({
    // Checked by `rein mcp serve` when it starts (origins need URL parsing), so a
    // project that never serves is not stopped by it.
    schema: Type.Unknown(),
    merge: "deep",
  }),
  /**
   * Retry of transient model errors (the only retry: provider clients' own retries
   * are off): `enabled` (default true), `maxAttempts` (4, the first call
   * included), `baseDelayMs` (2 000, doubled per retry), `maxDelayMs` (60 000).
   */
  retry: spec<{ enabled?: boolean; maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number }>({
    schema: closed(
      {
        enabled: optional(bool()),
        maxAttempts: optional(Type.Integer({ minimum: 1, expected: "an integer >= 1" })),
        baseDelayMs: optional(Type.Number({ minimum: 0, expected: "a number of milliseconds >= 0" })),
        maxDelayMs: optional(Type.Number({ minimum: 0, expected: "a number of milliseconds >= 0" })),
      },
      "{ enabled?, maxAttempts?, baseDelayMs?, maxDelayMs? }",
    ),
    merge: "deep",
  }),
  /**
   * What tool decisions record: `trail: true` keeps every tap's answer on each
   * persisted decision (`rein sessions show` and the export display it). Default off.
   */
  decisions: spec<{ trail?: boolean }>({
    schema: closed({ trail: optional(bool()) }, "{ trail?: boolean }", "the only decision option, trail"),
    merge: "deep",
  }),
  /**
   * Durable approvals: with `park: true` an `ask` nobody can answer (no terminal) parks
   * the run (exit code 4) instead of denying the call; answer it later with
   * `rein approvals approve|deny <id>` and continue with `rein run --session <id> --resume`.
   */
  approvals: spec<{ park?: boolean }>({
    schema: closed({ park: optional(bool()) }, "{ park?: boolean }", "absent (the only option is park)"),
    merge: "deep",
  }),
} satisfies Record<string, Pick<ConfigKeySpec, "schema" | "merge">>;

/** The config's top-level keys, in the table's order. */
export type ConfigKeyName = keyof typeof CONFIG_TABLE;
export const CONFIG_KEYS = Object.keys(CONFIG_TABLE) as ConfigKeyName[];

/** The type a table entry declares. */
export type ConfigValueOf<S> = S extends ConfigKeySpec<infer T> ? T : never;
