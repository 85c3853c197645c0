/**
 * Validates a plugin's options against its typebox schema, at load time.
 *
 * Invariant: `setup` only ever sees options that pass the schema, with schema
 * defaults applied (`Value.Default` first, then `Value.Check`: typebox's
 * `Parse` does not apply defaults). A failure is an `SdkError` `invalid_options`
 * naming the plugin, the option path (JSON pointer) and what was expected, e.g.
 * `plugin "no-secrets": option /paths/0 expected string, got number`.
 * Options are checked once per load, so the schema is interpreted, not compiled:
 * compiling costs ~3 ms a schema, a single interpreted check a few microseconds
 * once warm (but ~0.25 ms in a fresh process: plugin-options-fast.ts proves the
 * common schemas without it and hands everything else, every failure included, here).
 *
 * Schemas are closed by default: an object schema with `properties` and no
 * `additionalProperties` of its own (at any depth) is checked as if it had
 * `additionalProperties: false`, so a misspelt option (`writabel`) fails with a
 * "did you mean" instead of silently running with defaults. An author who wants
 * open options says so with `additionalProperties: true` (or a schema).
 */
import type { TSchema } from "typebox";
import type { TLocalizedValidationError } from "typebox/error";
import { Value } from "typebox/value";
import { didYouMean } from "./closest-name.js";
import { invalidOptions, invalidPlugin } from "./errors.js";
import { fastPluginOptions } from "./plugin-options-fast.js";

type SchemaNode = Record<string, unknown>;
const isNode = (value: unknown): value is SchemaNode =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A copy keeping typebox's hidden (non-enumerable) markers such as `~kind`. */
const copyNode = (node: SchemaNode): SchemaNode =>
  Object.defineProperties({}, Object.getOwnPropertyDescriptors(node)) as SchemaNode;

const closedCache = new WeakMap<object, TSchema>();

/**
 * The schema as options are checked: every object schema that lists `properties`
 * and says nothing about `additionalProperties` is closed. Members of `allOf`
 * (intersections) are left open, since each names only part of the properties.
 */
export function closeOptionsSchema(schema: TSchema): TSchema {
  const cached = closedCache.get(schema);
  if (cached) return cached;
  const close = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(close);
    if (!isNode(node)) return node;
    const copy = copyNode(node);
    if (isNode(node.properties)) {
      const properties: SchemaNode = {};
      for (const [key, value] of Object.entries(node.properties)) properties[key] = close(value);
      copy.properties = properties;
      if (!("additionalProperties" in node) && !("patternProperties" in node)) {
        copy.additionalProperties = false;
      }
    }
    for (const key of ["items", "prefixItems", "anyOf", "oneOf", "additionalProperties"]) {
      if (key in node && (isNode(node[key]) || Array.isArray(node[key]))) copy[key] = close(node[key]);
    }
    return copy;
  };
  const closed = close(schema) as TSchema;
  closedCache.set(schema, closed);
  return closed;
}

/** The sub-schema a JSON-schema path (`#/properties/a/anyOf/0`) points at. */
function schemaAt(root: unknown, schemaPath: string): unknown {
  let current: unknown = root;
  for (const raw of schemaPath.replace(/^#\/?/, "").split("/")) {
    if (raw === "") continue;
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const knownKeys = (objectSchema: unknown): string[] =>
  isNode(objectSchema) && isNode(objectSchema.properties) ? Object.keys(objectSchema.properties) : [];

const lastSegment = (pointer: string) =>
  (pointer.split("/").at(-1) ?? "").replaceAll("~1", "/").replaceAll("~0", "~");

/** The allowed literals of a union of constants (`"a" | "b"`), or `undefined`. */
function literalChoices(node: unknown): unknown[] | undefined {
  if (!isNode(node) || !Array.isArray(node.anyOf)) return undefined;
  const choices = node.anyOf.map((member) =>
    isNode(member) && "const" in member ? member.const : undefined,
  );
  return choices.every((choice) => choice !== undefined) ? choices : undefined;
}

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
  schema?: TSchema,
): { path: string; problem: string } {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "boolean" && error.schemaPath.endsWith("/additionalProperties")) {
    // A closed object met a key it does not list (reported at the key itself).
    const objectSchema = schemaAt(schema, error.schemaPath.slice(0, -"/additionalProperties".length));
    return {
      path: error.instancePath,
      problem: `is not a known option${didYouMean(lastSegment(error.instancePath), knownKeys(objectSchema))}`,
    };
  }
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
      const known = knownKeys(schemaAt(schema, error.schemaPath));
      return {
        path: first === undefined ? error.instancePath : `${error.instancePath}/${first}`,
        problem: `is not a known option${first === undefined ? "" : didYouMean(first, known)}`,
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
  const closed = closeOptionsSchema(schema);
  // Common schemas are proved without typebox (cold in a fresh process); anything else is typebox's.
  const fast = fastPluginOptions(closed, raw);
  if (fast) return fast.value as T;
  // Omitted options on an object schema mean "all defaults", not "not an object".
  const start = raw === undefined && (schema as { type?: unknown }).type === "object" ? {} : Value.Clone(raw);
  let value: unknown;
  let valid: boolean;
  try {
    value = Value.Default(closed, start);
    valid = Value.Check(closed, value);
  } catch (error) {
    throw invalidPlugin(`plugin "${plugin}": its options schema cannot be checked`, plugin, { cause: error });
  }
  if (valid) return value as T;
  const errors = [...Value.Errors(closed, value)];
  const [first] = errors;
  if (!first) throw invalidOptions(plugin, "", "does not match the options schema");
  // A value outside a union of literals: name the choices rather than the first constant.
  const union = errors.find(
    (error) => error.keyword === "anyOf" && literalChoices(schemaAt(closed, error.schemaPath)),
  );
  if (union && first.instancePath === union.instancePath) {
    const choices = literalChoices(schemaAt(closed, union.schemaPath)) as unknown[];
    const got = valueAt(value, union.instancePath);
    const hint = typeof got === "string" ? didYouMean(got, choices.map(String)) : "";
    throw invalidOptions(
      plugin,
      union.instancePath,
      `expected one of ${choices.map((c) => JSON.stringify(c)).join(" | ")}, got ${JSON.stringify(got)}${hint}`,
    );
  }
  const { path, problem } = describeOptionError(first, value, closed);
  throw invalidOptions(plugin, path, problem);
}
