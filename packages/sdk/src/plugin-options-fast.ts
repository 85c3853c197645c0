/**
 * A fast path for plugin options on the common schemas: objects of strings,
 * numbers, integers, booleans and arrays of them, with primitive defaults.
 *
 * Invariant: it returns options only where typebox's `Value.Clone` +
 * `Value.Default` + `Value.Check` (plugin-options.ts) would return an equal value
 * and call it valid; on any schema keyword, value shape or outcome it does not
 * model (including every invalid value) it returns `undefined`, and the caller
 * takes typebox's path, so defaults, acceptance and error messages are typebox's.
 * Why: in a fresh process typebox's interpreter is cold, ~0.25 ms a plugin, a
 * fifth of a warm 30-plugin start; this code warms up in microseconds.
 */

/** Keywords that do not constrain a value (typebox ignores them when checking). */
const ANNOTATIONS = ["title", "description", "$comment", "examples"];
/** Own keys allowed on a node of each type, besides `type`, `default` and the annotations. */
const KEYWORDS: Record<string, readonly string[]> = {
  object: ["properties", "required", "additionalProperties"],
  array: ["items"],
  string: [],
  boolean: [],
  number: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"],
  integer: ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"],
};
/** typebox's hidden markers (non-enumerable) that do not change Default or Check for these types. */
const HIDDEN = ["~kind", "~optional", "~readonly"];
/** The `~kind` typebox gives each type; Default only descends into `Object` and `Array` kinds. */
const KIND: Record<string, string> = {
  object: "Object",
  array: "Array",
  string: "String",
  boolean: "Boolean",
  number: "Number",
  integer: "Integer",
};
/** Property names a plain (reparsed) regex or an `in` check could read differently. */
const SIMPLE_KEY = /^[A-Za-z0-9_$-]+$/;

type Node = Record<string, unknown>;
const NOT_PROVEN: unique symbol = Symbol("not proven");
type Result = unknown | typeof NOT_PROVEN;

const isPrimitive = (value: unknown): boolean =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean";

/** Every own key a plain data object, as `Value.Clone` copies it; undefined when it is not plain data. */
function plainKeys(value: object, proto: object): string[] | undefined {
  if (Object.getPrototypeOf(value) !== proto || Object.getOwnPropertySymbols(value).length > 0)
    return undefined;
  const keys = Object.getOwnPropertyNames(value);
  for (const key of keys) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor;
    if (!descriptor.enumerable || !("value" in descriptor)) {
      // An array's `length` is its own non-enumerable data property.
      if (!(Array.isArray(value) && key === "length")) return undefined;
    }
  }
  return keys;
}

/** A deep copy of JSON-like data (what `Value.Clone` gives for it), or NOT_PROVEN for anything else. */
function cloneData(value: unknown): Result {
  if (isPrimitive(value)) return value;
  if (Array.isArray(value)) {
    const keys = plainKeys(value, Array.prototype);
    if (!keys || keys.length !== value.length + 1) return NOT_PROVEN; // holes or extra keys
    const out: unknown[] = [];
    for (const element of value) {
      const copy = cloneData(element);
      if (copy === NOT_PROVEN) return NOT_PROVEN;
      out.push(copy);
    }
    return out;
  }
  if (typeof value !== "object") return NOT_PROVEN;
  const keys = plainKeys(value as object, Object.prototype);
  if (!keys) return NOT_PROVEN;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (key === "__proto__" || key === "constructor" || key === "prototype") return NOT_PROVEN;
    const copy = cloneData((value as Record<string, unknown>)[key]);
    if (copy === NOT_PROVEN) return NOT_PROVEN;
    out[key] = copy;
  }
  return out;
}

/** The node's type when every key on it is one this module models, else undefined. */
function modelledType(node: unknown): string | undefined {
  if (typeof node !== "object" || node === null || Object.getPrototypeOf(node) !== Object.prototype)
    return undefined;
  const type = (node as Node).type;
  if (typeof type !== "string") return undefined;
  const allowed = KEYWORDS[type];
  if (!allowed) return undefined;
  for (const key of Object.getOwnPropertyNames(node)) {
    if (key === "type" || key === "default" || ANNOTATIONS.includes(key) || allowed.includes(key)) continue;
    if (HIDDEN.includes(key) && !Object.getOwnPropertyDescriptor(node, key)?.enumerable) continue;
    return undefined;
  }
  if (Object.getOwnPropertySymbols(node).length > 0) return undefined;
  const kind = (node as Node)["~kind"];
  // Default descends by kind: an object or array schema without typebox's kind is not modelled.
  if (kind === undefined ? type === "object" || type === "array" : kind !== KIND[type]) return undefined;
  return type;
}

const bound = (value: unknown) => value === undefined || (typeof value === "number" && !Number.isNaN(value));

/** `Value.Default` then `Value.Check` on one node, in place; NOT_PROVEN when either is not modelled or fails. */
function defaultAndCheck(node: unknown, value: unknown): Result {
  const type = modelledType(node);
  if (type === undefined) return NOT_PROVEN;
  const schema = node as Node;
  let current = value;
  if ("default" in schema && current === undefined) {
    if (!isPrimitive(schema.default)) return NOT_PROVEN;
    current = schema.default;
  }
  switch (type) {
    case "string":
      return typeof current === "string" ? current : NOT_PROVEN;
    case "boolean":
      return typeof current === "boolean" ? current : NOT_PROVEN;
    case "number":
    case "integer": {
      const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
      if (![minimum, maximum, exclusiveMinimum, exclusiveMaximum].every(bound)) return NOT_PROVEN;
      if (typeof current !== "number" || !Number.isFinite(current)) return NOT_PROVEN;
      if (type === "integer" && !Number.isInteger(current)) return NOT_PROVEN;
      const n = current;
      const within =
        (minimum === undefined || n >= (minimum as number)) &&
        (maximum === undefined || n <= (maximum as number)) &&
        (exclusiveMinimum === undefined || n > (exclusiveMinimum as number)) &&
        (exclusiveMaximum === undefined || n < (exclusiveMaximum as number));
      return within ? n : NOT_PROVEN;
    }
    case "array": {
      if (!Array.isArray(current) || Array.isArray(schema.items)) return NOT_PROVEN;
      for (let i = 0; i < current.length; i++) {
        const element = defaultAndCheck(schema.items, current[i]);
        if (element === NOT_PROVEN) return NOT_PROVEN;
        current[i] = element;
      }
      return current;
    }
    default:
      return objectDefaultAndCheck(schema, current);
  }
}

function objectDefaultAndCheck(schema: Node, value: unknown): Result {
  const { properties, required = [], additionalProperties } = schema;
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return NOT_PROVEN;
  if (Object.getPrototypeOf(properties) !== Object.prototype) return NOT_PROVEN;
  if (!Array.isArray(required) || typeof additionalProperties !== "boolean") return NOT_PROVEN;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return NOT_PROVEN;
  const target = value as Record<string, unknown>;
  const known = Object.getOwnPropertyNames(properties);
  for (const key of known) {
    // `in` (typebox's presence test) would see Object.prototype's members; odd names reach a regex.
    if (!SIMPLE_KEY.test(key) || key in Object.prototype) return NOT_PROVEN;
  }
  for (const key of required) {
    if (typeof key !== "string" || !known.includes(key)) return NOT_PROVEN;
  }
  for (const key of known) {
    const property = (properties as Node)[key];
    const present = Object.hasOwn(target, key);
    // An optional key present as `undefined` depends on typebox's exactOptionalPropertyTypes setting.
    if (present && target[key] === undefined) return NOT_PROVEN;
    const hasDefault = typeof property === "object" && property !== null && "default" in property;
    if (!present && !hasDefault) {
      if (required.includes(key)) return NOT_PROVEN;
      if (modelledType(property) === undefined) return NOT_PROVEN;
      continue;
    }
    const checked = defaultAndCheck(property, target[key]);
    if (checked === NOT_PROVEN) return NOT_PROVEN;
    target[key] = checked;
  }
  if (!additionalProperties) {
    for (const key of Object.keys(target)) if (!known.includes(key)) return NOT_PROVEN;
  }
  return target;
}

/**
 * The options `setup` receives when this fast path can prove them (see the header),
 * as `{ value }`; `undefined` sends the caller to typebox. `schema` is the closed schema.
 */
export function fastPluginOptions(schema: unknown, raw: unknown): { value: unknown } | undefined {
  const start = raw === undefined && (schema as { type?: unknown }).type === "object" ? {} : cloneData(raw);
  if (start === NOT_PROVEN) return undefined;
  const value = defaultAndCheck(schema, start);
  return value === NOT_PROVEN ? undefined : { value };
}
