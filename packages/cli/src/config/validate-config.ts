/**
 * Checks a loaded config's shape before anything uses it. Every problem names the
 * option (`plugins[2]`, `models[0].baseUrl`), what was expected, and - when the
 * option can be found in the source - the file and line.
 */
import { THINKING_LEVELS } from "@rein/harness/session";
import type { ReinConfig } from "@rein/sdk";
import { configError } from "../errors.js";
import { CUSTOM_MODEL_APIS } from "./custom-model-apis.js";
import { checkSkillsOption } from "./skills-option.js";

/** The config's top-level options. */
export const CONFIG_OPTIONS = [
  "model",
  "models",
  "plugins",
  "tools",
  "session",
  "systemPrompt",
  "instructions",
  "thinkingLevel",
  "compaction",
  "mcpServe",
  "retry",
  "decisions",
  "approvals",
  "skills",
] as const;
const THINKING: readonly string[] = THINKING_LEVELS;

export interface ConfigSource {
  file: string | undefined;
  text: string | undefined;
  /** The layer the file is (`user`, `project`, `local`, `managed`), carried by every error. */
  layer?: string;
}

/** The first line of `text` that defines `key` (`key:` or `"key":`), 1-based. */
export function lineOfKey(text: string | undefined, key: string): number | undefined {
  if (!text) return undefined;
  const pattern = new RegExp(`(^|[\\s{,])["']?${key.replace(/[^\w]/g, "")}["']?\\s*:`);
  const lines = text.split("\n");
  const index = lines.findIndex((line) => pattern.test(line));
  return index === -1 ? undefined : index + 1;
}

const describe = (value: unknown) =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "an array"
      : typeof value === "object"
        ? "an object"
        : `${typeof value} ${JSON.stringify(value)}`;

function closest(word: string, candidates: readonly string[]): string | undefined {
  const distance = (a: string, b: string) => {
    const row = Array.from({ length: b.length + 1 }, (_, i) => i);
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0] as number;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const current = row[j] as number;
        row[j] = Math.min(
          current + 1,
          (row[j - 1] as number) + 1,
          previous + (a[i - 1] === b[j - 1] ? 0 : 1),
        );
        previous = current;
      }
    }
    return row[b.length] as number;
  };
  const best = candidates.map((c) => [c, distance(word, c)] as const).sort((x, y) => x[1] - y[1])[0];
  return best && best[1] <= 2 ? best[0] : undefined;
}

export function validateConfig(raw: unknown, source: ConfigSource): ReinConfig {
  const where = {
    ...(source.file ? { file: source.file } : {}),
    ...(source.layer ? { layer: source.layer } : {}),
  };
  const fail = (
    option: string,
    expected: string,
    value: unknown,
    key = option.split(/[.[]/)[0] as string,
  ): never => {
    const line = lineOfKey(source.text, key);
    // `plugins[2]`: the index is this file's own (each layer is validated alone).
    const entry = /^plugins\[(\d+)\]/.exec(option);
    throw configError(`${option}: expected ${expected}, got ${describe(value)}`, {
      ...where,
      ...(line ? { line } : {}),
      ...(entry ? { index: Number(entry[1]) } : {}),
    });
  };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw configError(
      `the config must export an object (export default defineConfig({ ... })), got ${describe(raw)}`,
      where,
    );
  }
  const config = raw as Record<string, unknown>;
  for (const key of Object.keys(config)) {
    if (!(CONFIG_OPTIONS as readonly string[]).includes(key)) {
      const suggestion = closest(key, CONFIG_OPTIONS);
      const line = lineOfKey(source.text, key);
      throw configError(
        `unknown option "${key}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; known options: ${CONFIG_OPTIONS.join(", ")}`,
        { ...where, ...(line ? { line } : {}) },
      );
    }
  }

  const { model, models, plugins, tools, session, systemPrompt, thinkingLevel, compaction, retry } = config;
  checkDecisions(config.decisions, fail);
  checkSkillsOption(config.skills, fail);
  if (retry !== undefined) {
    if (typeof retry !== "object" || retry === null || Array.isArray(retry)) {
      fail("retry", "{ enabled?, maxAttempts?, baseDelayMs?, maxDelayMs? }", retry);
    }
    const settings = retry as Record<string, unknown>;
    for (const key of Object.keys(settings)) {
      if (!["enabled", "maxAttempts", "baseDelayMs", "maxDelayMs"].includes(key)) {
        fail(`retry.${key}`, "one of enabled, maxAttempts, baseDelayMs, maxDelayMs", key, key);
      }
    }
    if (settings.enabled !== undefined && typeof settings.enabled !== "boolean") {
      fail("retry.enabled", "a boolean", settings.enabled, "enabled");
    }
    if (
      settings.maxAttempts !== undefined &&
      !(
        typeof settings.maxAttempts === "number" &&
        Number.isInteger(settings.maxAttempts) &&
        settings.maxAttempts >= 1
      )
    ) {
      fail("retry.maxAttempts", "an integer >= 1", settings.maxAttempts, "maxAttempts");
    }
    for (const key of ["baseDelayMs", "maxDelayMs"] as const) {
      const value = settings[key];
      if (value !== undefined && !(typeof value === "number" && Number.isFinite(value) && value >= 0)) {
        fail(`retry.${key}`, "a number of milliseconds >= 0", value, key);
      }
    }
  }
  if (compaction !== undefined) {
    if (typeof compaction !== "object" || compaction === null || Array.isArray(compaction)) {
      fail("compaction", "{ enabled?, reserveTokens?, keepRecentTokens? }", compaction);
    }
    const settings = compaction as Record<string, unknown>;
    for (const key of Object.keys(settings)) {
      if (!["enabled", "reserveTokens", "keepRecentTokens"].includes(key)) {
        fail(`compaction.${key}`, "one of enabled, reserveTokens, keepRecentTokens", key, key);
      }
    }
    if (settings.enabled !== undefined && typeof settings.enabled !== "boolean") {
      fail("compaction.enabled", "a boolean", settings.enabled, "enabled");
    }
    for (const key of ["reserveTokens", "keepRecentTokens"] as const) {
      const value = settings[key];
      if (value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value >= 0)) {
        fail(`compaction.${key}`, "a non-negative integer", value, key);
      }
    }
  }
  if (model !== undefined) {
    const scripted =
      typeof model === "object" && model !== null && Array.isArray((model as { script?: unknown }).script);
    if (typeof model !== "string" && !scripted)
      fail("model", '"provider/id", a custom model id, or { script: [...] }', model);
  }
  if (models !== undefined) {
    if (!Array.isArray(models)) fail("models", "an array of custom models", models);
    for (const [i, m] of (models as unknown[]).entries()) {
      if (typeof m !== "object" || m === null)
        fail(`models[${i}]`, "{ id, baseUrl, api?, contextWindow? }", m, "models");
      const entry = m as Record<string, unknown>;
      if (typeof entry.id !== "string" || entry.id === "")
        fail(`models[${i}].id`, "a non-empty string", entry.id, "models");
      if (typeof entry.baseUrl !== "string" || !/^https?:\/\//.test(entry.baseUrl)) {
        fail(`models[${i}].baseUrl`, "an http(s) URL", entry.baseUrl, "baseUrl");
      }
      for (const field of ["contextWindow", "maxTokens"] as const) {
        const value = entry[field];
        if (value !== undefined && !(typeof value === "number" && Number.isInteger(value) && value > 0)) {
          fail(`models[${i}].${field}`, "a positive integer", value, field);
        }
      }
      for (const field of ["api", "provider", "name", "apiKeyEnv"] as const) {
        if (entry[field] !== undefined && typeof entry[field] !== "string")
          fail(`models[${i}].${field}`, "a string", entry[field], field);
      }
      if (entry.api !== undefined && !(CUSTOM_MODEL_APIS as readonly unknown[]).includes(entry.api))
        fail(`models[${i}].api`, `one of ${CUSTOM_MODEL_APIS.join(", ")}`, entry.api, "api");
      for (const field of ["compat", "thinkingLevelMap"] as const) {
        const value = entry[field];
        if (value !== undefined && (typeof value !== "object" || value === null || Array.isArray(value)))
          fail(`models[${i}].${field}`, "an object (pi-ai's catalogue fields)", value, field);
      }
      const levels = entry.thinkingLevelMap as Record<string, unknown> | undefined;
      for (const [level, value] of Object.entries(levels ?? {})) {
        if (!THINKING.includes(level))
          fail(
            `models[${i}].thinkingLevelMap.${level}`,
            `a thinking level (${THINKING.join(", ")})`,
            level,
            level,
          );
        if (value !== null && typeof value !== "string")
          fail(`models[${i}].thinkingLevelMap.${level}`, "a string or null", value, level);
      }
      checkModelOptions(entry, `models[${i}]`, fail);
    }
  }
  if (plugins !== undefined) {
    if (!Array.isArray(plugins)) fail("plugins", "an array of plugin entries", plugins);
    for (const [i, entry] of (plugins as unknown[]).entries()) {
      const ok =
        typeof entry === "string" ||
        (Array.isArray(entry) &&
          (entry.length === 0 || typeof entry[0] === "string" || typeof entry[0] === "object")) ||
        (typeof entry === "object" && entry !== null);
      if (!ok)
        fail(
          `plugins[${i}]`,
          'a package name, a "./path.ts", [specifier, options], a plugin object or a tool array',
          entry,
          "plugins",
        );
    }
  }
  if (tools !== undefined) {
    if (typeof tools !== "object" || tools === null || Array.isArray(tools))
      fail("tools", "{ active?: string[] }", tools);
    const active = (tools as { active?: unknown }).active;
    if (active !== undefined && !(Array.isArray(active) && active.every((n) => typeof n === "string"))) {
      fail("tools.active", "an array of tool names", active, "active");
    }
  }
  if (session !== undefined) {
    const { dir, store, url } = (session ?? {}) as { dir?: unknown; store?: unknown; url?: unknown };
    if (typeof session !== "object" || session === null || (dir !== undefined && typeof dir !== "string")) {
      fail("session", '{ dir?: string, store?: "jsonl" | "postgres", url?: string }', session);
    }
    for (const key of Object.keys(session as object)) {
      if (!["dir", "store", "url"].includes(key)) fail(`session.${key}`, "one of dir, store, url", key, key);
    }
    // A connection string may carry a password: never echo it.
    const shown = typeof url === "string" ? url.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@") : url;
    if (store !== undefined && store !== "jsonl" && store !== "postgres")
      fail("session.store", '"jsonl" or "postgres"', store, "store");
    if (store === "postgres" && !(typeof url === "string" && /^postgres(ql)?:\/\//.test(url)))
      fail("session.url", 'a postgres:// connection string (session.store is "postgres")', shown, "url");
    if (store !== "postgres" && url !== undefined)
      fail("session.url", 'nothing unless session.store is "postgres"', shown, "url");
  }
  const approvals = config.approvals as { park?: unknown } | undefined | null;
  if (approvals !== undefined) {
    if (typeof approvals !== "object" || approvals === null || Array.isArray(approvals))
      fail("approvals", "{ park?: boolean }", approvals);
    const extra = Object.keys(approvals as object).find((key) => key !== "park");
    if (extra !== undefined) fail(`approvals.${extra}`, "absent (the only option is park)", extra, extra);
    if (approvals?.park !== undefined && typeof approvals.park !== "boolean")
      fail("approvals.park", "a boolean", approvals.park, "park");
  }
  if (systemPrompt !== undefined && typeof systemPrompt !== "string")
    fail("systemPrompt", "a string", systemPrompt);
  const instructions = config.instructions as { enabled?: unknown } | undefined | null;
  if (instructions !== undefined) {
    if (typeof instructions !== "object" || instructions === null || Array.isArray(instructions))
      fail("instructions", "{ enabled?: boolean }", instructions);
    const extra = Object.keys(instructions as object).find((key) => key !== "enabled");
    if (extra !== undefined)
      fail(`instructions.${extra}`, "absent (the only option is enabled)", extra, extra);
    if (instructions?.enabled !== undefined && typeof instructions.enabled !== "boolean")
      fail("instructions.enabled", "a boolean", instructions.enabled, "enabled");
  }
  if (thinkingLevel !== undefined && !THINKING.includes(thinkingLevel as string)) {
    fail("thinkingLevel", `one of ${THINKING.join(", ")}`, thinkingLevel);
  }
  return config as ReinConfig;
}

type Fail = (option: string, expected: string, value: unknown, key?: string) => never;

/** A custom model's input types, sampling and prices. */
function checkModelOptions(entry: Record<string, unknown>, where: string, fail: Fail): void {
  const { input, temperature, reasoning, cost } = entry;
  if (
    input !== undefined &&
    !(
      Array.isArray(input) &&
      input.length > 0 &&
      input.includes("text") &&
      input.every((type) => type === "text" || type === "image")
    )
  ) {
    fail(`${where}.input`, '["text"] or ["text", "image"]', input, "input");
  }
  if (
    temperature !== undefined &&
    !(typeof temperature === "number" && temperature >= 0 && temperature <= 2)
  ) {
    fail(`${where}.temperature`, "a number from 0 to 2", temperature, "temperature");
  }
  if (reasoning !== undefined && typeof reasoning !== "boolean")
    fail(`${where}.reasoning`, "a boolean", reasoning, "reasoning");
  if (cost === undefined) return;
  if (typeof cost !== "object" || cost === null || Array.isArray(cost))
    fail(
      `${where}.cost`,
      "{ input?, output?, cacheRead?, cacheWrite? } in dollars per million tokens",
      cost,
      "cost",
    );
  for (const [key, value] of Object.entries(cost as Record<string, unknown>)) {
    if (!["input", "output", "cacheRead", "cacheWrite"].includes(key))
      fail(`${where}.cost.${key}`, "one of input, output, cacheRead, cacheWrite", key, "cost");
    if (!(typeof value === "number" && Number.isFinite(value) && value >= 0))
      fail(`${where}.cost.${key}`, "dollars per million tokens (a number >= 0)", value, "cost");
  }
}

/** `decisions: { trail?: boolean }`. */
function checkDecisions(
  decisions: unknown,
  fail: (option: string, expected: string, value: unknown, key?: string) => never,
): void {
  if (decisions === undefined) return;
  if (typeof decisions !== "object" || decisions === null || Array.isArray(decisions)) {
    fail("decisions", "{ trail?: boolean }", decisions);
  }
  for (const [key, value] of Object.entries(decisions as Record<string, unknown>)) {
    if (key !== "trail") fail(`decisions.${key}`, "the only decision option, trail", key, key);
    if (typeof value !== "boolean") fail("decisions.trail", "a boolean", value, "trail");
  }
}
