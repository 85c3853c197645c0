/**
 * Validates a plugin's options against its typebox schema, at load time.
 *
 * Invariant: `setup` only ever sees options that pass the schema, with schema
 * defaults applied (`Value.Default` first, then `Value.Check`: typebox's
 * `Parse` does not apply defaults). A failure is an `SdkError` `invalid_options`
 * naming the plugin, the option path (JSON pointer) and what was expected, e.g.
 * `plugin "no-secrets": option /paths/0 expected string, got number`.
 * Options are checked once per load, so the schema is interpreted, not compiled:
 * compiling costs ~3 ms a schema, a single interpreted check a few microseconds.
 */
import type { TSchema } from "typebox";
import type { TLocalizedValidationError } from "typebox/error";
import { Value } from "typebox/value";
import { invalidOptions, invalidPlugin } from "./errors.js";

const typeOf = (value: unknown): string => {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && Number.isInteger(value)) return "number";
  return typeof value;
};

/** The value at a JSON pointer (`/a/0/b`), for saying what was found instead. */
function valueAt(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  let current: unknown = root;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** One problem, in words: the path it concerns and what was expected there. */
export function describeOptionError(
  error: TLocalizedValidationError,
  value: unknown,
): { path: string; problem: string } {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required": {
      const missing = (params.requiredProperties as string[] | undefined) ?? [];
      const first = missing[0];
      const path = first === undefined ? error.instancePath : `${error.instancePath}/${first}`;
      return {
        path,
        problem: `is required${missing.length > 1 ? ` (also missing: ${missing.slice(1).join(", ")})` : ""}`,
      };
    }
    case "type":
      return {
        path: error.instancePath,
        problem: `expected ${String(params.type)}, got ${typeOf(valueAt(value, error.instancePath))}`,
      };
    case "additionalProperties": {
      const extra = (params.additionalProperties as string[] | undefined) ?? [];
      const first = extra[0];
      return {
        path: first === undefined ? error.instancePath : `${error.instancePath}/${first}`,
        problem: "is not a known option",
      };
    }
    default:
      return { path: error.instancePath, problem: `expected a value that ${error.message}` };
  }
}

/**
 * Applies the schema's defaults to `raw` and checks the result; returns the
 * options `setup` receives. Without a schema, `raw` passes through unchanged.
 */
export function resolvePluginOptions<T = unknown>(
  plugin: string,
  schema: TSchema | undefined,
  raw: unknown,
): T {
  if (schema === undefined) return raw as T;
  // Omitted options on an object schema mean "all defaults", not "not an object".
  const start = raw === undefined && (schema as { type?: unknown }).type === "object" ? {} : Value.Clone(raw);
  let value: unknown;
  let valid: boolean;
  try {
    value = Value.Default(schema, start);
    valid = Value.Check(schema, value);
  } catch (error) {
    throw invalidPlugin(`plugin "${plugin}": its options schema cannot be checked`, plugin, { cause: error });
  }
  if (valid) return value as T;
  const [first] = Value.Errors(schema, value);
  if (!first) throw invalidOptions(plugin, "", "does not match the options schema");
  const { path, problem } = describeOptionError(first, value);
  throw invalidOptions(plugin, path, problem);
}
