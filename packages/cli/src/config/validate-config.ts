/**
 * Checks a loaded config's shape before anything uses it, by the config table's
 * schemas (`CONFIG_TABLE` of @rein/sdk: typebox checks, the table's words for
 * what was expected). Every problem names the option (`plugins[2]`,
 * `models[0].baseUrl`), what was expected, and - when the option can be found in
 * the source - the file and line.
 */
import { CONFIG_KEYS, CONFIG_TABLE, type ConfigKeySpec, closestName, type ReinConfig } from "@rein/sdk";
import type { TSchema } from "typebox";
import { Value } from "typebox/value";
import { configError } from "../errors.js";

/** The config's top-level options, in the table's order. */
export const CONFIG_OPTIONS: readonly string[] = CONFIG_KEYS;

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

/** A value that failed its schema: where (`retry.maxAttempts`), what was expected, what was found. */
interface Problem {
  path: string;
  expected: string;
  value: unknown;
  /** The key whose line is looked up in the source. */
  key: string;
}

type Annotated = TSchema & {
  expected?: string;
  unknownKey?: string;
  type?: string;
  properties?: Record<string, TSchema>;
  required?: string[];
  additionalProperties?: unknown;
  items?: TSchema;
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The innermost part of `value` its schema rejects: typebox decides, and this
 * walks down closed objects (an unknown key first) and arrays to say where.
 */
function problemIn(schema: Annotated, value: unknown, path: string, key: string): Problem | undefined {
  if (Value.Check(schema, value)) return undefined;
  if (schema.type === "object" && schema.properties && isRecord(value)) {
    if (schema.additionalProperties === false) {
      const extra = Object.keys(value).find((name) => !(name in (schema.properties as object)));
      if (extra !== undefined)
        return {
          path: `${path}.${extra}`,
          expected: schema.unknownKey ?? "absent",
          value: extra,
          key: extra,
        };
    }
    for (const [name, property] of Object.entries(schema.properties)) {
      if (value[name] === undefined && !schema.required?.includes(name)) continue;
      const found = problemIn(property as Annotated, value[name], `${path}.${name}`, name);
      if (found) return found;
    }
  }
  if (schema.type === "array" && schema.items && Array.isArray(value)) {
    for (const [i, item] of (value as unknown[]).entries()) {
      // An entry's line is its list's (`models`), a field's its own (`baseUrl`).
      const found = problemIn(schema.items as Annotated, item, `${path}[${i}]`, key);
      if (found) return found;
    }
  }
  return { path, expected: schema.expected ?? "a valid value", value, key };
}

export function validateConfig(raw: unknown, source: ConfigSource): ReinConfig {
  const where = {
    ...(source.file ? { file: source.file } : {}),
    ...(source.layer ? { layer: source.layer } : {}),
  };
  if (!isRecord(raw)) {
    throw configError(
      `the config must export an object (export default defineConfig({ ... })), got ${describe(raw)}`,
      where,
    );
  }
  for (const key of Object.keys(raw)) {
    if (!CONFIG_OPTIONS.includes(key)) {
      const suggestion = closestName(key, CONFIG_OPTIONS);
      const line = lineOfKey(source.text, key);
      throw configError(
        `unknown option "${key}"${suggestion ? ` (did you mean "${suggestion}"?)` : ""}; known options: ${CONFIG_OPTIONS.join(", ")}`,
        { ...where, ...(line ? { line } : {}) },
      );
    }
  }
  for (const name of CONFIG_KEYS) {
    const value = raw[name];
    if (value === undefined) continue;
    const spec: ConfigKeySpec = CONFIG_TABLE[name];
    const problem = problemIn(spec.schema, value, name, name) ?? refined(spec, value, name);
    if (!problem) continue;
    const line = lineOfKey(source.text, problem.key);
    // `plugins[2]`: the index is this file's own (each layer is validated alone).
    const entry = /^plugins\[(\d+)\]/.exec(problem.path);
    throw configError(`${problem.path}: expected ${problem.expected}, got ${describe(problem.value)}`, {
      ...where,
      ...(line ? { line } : {}),
      ...(entry ? { index: Number(entry[1]) } : {}),
    });
  }
  return raw as ReinConfig;
}

/** The table entry's own rule (one field depending on another), once the schema passed. */
function refined(spec: ConfigKeySpec, value: unknown, name: string): Problem | undefined {
  const found = spec.refine?.(value);
  if (!found) return undefined;
  const key = found.path.split(".").at(-1) as string;
  const shown = "shown" in found ? found.shown : value;
  return { path: `${name}.${found.path}`, expected: found.expected, value: shown, key };
}
