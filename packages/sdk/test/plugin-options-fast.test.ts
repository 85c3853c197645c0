import { Value } from "typebox/value";
import { describe, expect, it } from "vitest";
import { Type } from "../src/index.js";
import { closeOptionsSchema } from "../src/plugin-options.js";
import { fastPluginOptions } from "../src/plugin-options-fast.js";

/** typebox's path, as resolvePluginOptions takes it: `{ valid, value }`. */
function typebox(schema: ReturnType<typeof Type.Object> | object, raw: unknown) {
  const closed = closeOptionsSchema(schema as never);
  const start = raw === undefined && (schema as { type?: unknown }).type === "object" ? {} : Value.Clone(raw);
  const value = Value.Default(closed, start);
  return { valid: Value.Check(closed, value), value };
}

const fast = (schema: object, raw: unknown) => fastPluginOptions(closeOptionsSchema(schema as never), raw);

const Simple = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 10, default: 3 }),
  ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1 })),
  strict: Type.Boolean({ default: true }),
  label: Type.String({ default: "x", description: "a label" }),
  paths: Type.Optional(Type.Array(Type.String())),
  nested: Type.Optional(Type.Object({ depth: Type.Integer({ default: 2 }), name: Type.String() })),
});

const Open = Type.Object({ mode: Type.String({ default: "a" }) }, { additionalProperties: true });

/** Values typebox accepts and rejects, for both schemas. */
const RAWS: unknown[] = [
  undefined,
  {},
  { limit: 5 },
  { limit: 0 },
  { limit: 11 },
  { limit: 2.5 },
  { limit: Number.NaN },
  { limit: "3" },
  { ratio: 0 },
  { ratio: 0.5 },
  { ratio: 1 },
  { strict: false, label: "y" },
  { strict: "no" },
  { label: undefined },
  { paths: [] },
  { paths: ["a", "b"] },
  { paths: ["a", 1] },
  { paths: "a" },
  { nested: { name: "n" } },
  { nested: { name: "n", depth: 4 } },
  { nested: { depth: 4 } },
  { nested: { name: "n", extra: 1 } },
  { limt: 3 },
  { mode: "b", other: { deep: [1, 2] } },
  { mode: 1 },
  { toString: "x" },
  null,
  [],
  "text",
  Object.create(null),
  { [Symbol("s")]: 1 },
  { date: new Date(0) },
];

describe("the plugin options fast path", () => {
  it("proves only what typebox accepts, and returns typebox's value for it", () => {
    let proved = 0;
    for (const schema of [Simple, Open]) {
      for (const raw of RAWS) {
        const expected = typebox(schema, raw);
        const got = fast(schema, raw);
        if (got === undefined) continue;
        proved++;
        expect(expected.valid, `${JSON.stringify(raw)} proved but typebox rejects it`).toBe(true);
        expect(got.value).toStrictEqual(expected.value);
        // Same key order as typebox's clone + defaults (what `rein plugins` prints).
        expect(Object.keys(got.value as object)).toEqual(Object.keys(expected.value as object));
      }
    }
    // It must actually take the common cases, or it saves nothing.
    expect(proved).toBeGreaterThanOrEqual(12);
  });

  it("takes the common cases: omitted options, defaults, nested objects and arrays", () => {
    expect(fast(Simple, undefined)).toEqual({ value: { limit: 3, strict: true, label: "x" } });
    expect(fast(Simple, { paths: ["a"], nested: { name: "n" } })).toEqual({
      value: { paths: ["a"], nested: { name: "n", depth: 2 }, limit: 3, strict: true, label: "x" },
    });
    expect(fast(Open, { other: [1, "2"] })?.value).toEqual({ other: [1, "2"], mode: "a" });
  });

  it("does not alias the caller's options", () => {
    const raw = { paths: ["a"] };
    const got = fast(Simple, raw)?.value as { paths: string[] };
    expect(got.paths).not.toBe(raw.paths);
    expect(raw).toEqual({ paths: ["a"] });
  });

  it("leaves invalid values and unmodelled schemas to typebox", () => {
    expect(fast(Simple, { limit: 0 })).toBeUndefined();
    expect(fast(Simple, { limt: 3 })).toBeUndefined();
    expect(fast(Simple, { label: undefined })).toBeUndefined();
    // Each value is valid for typebox: only the schema's unmodelled keyword sends it there.
    const unmodelled: [object, unknown][] = [
      [Type.Object({ name: Type.String({ minLength: 2 }) }), { name: "abc" }],
      [Type.Object({ mode: Type.Union([Type.Literal("a"), Type.Literal("b")]) }), { mode: "a" }],
      [Type.Object({ name: Type.String({ pattern: "^a" }) }), { name: "abc" }],
      [Type.Object({ list: Type.Array(Type.String(), { minItems: 1 }) }), { list: ["a"] }],
      [Type.Object({ tags: Type.Record(Type.String(), Type.String()) }), { tags: { a: "b" } }],
      [Type.Object({ limits: Type.Object({ a: Type.Number() }, { default: { a: 1 } }) }), {}],
      [{ type: "object", properties: { a: { type: "string", default: "x" } } }, {}],
    ];
    for (const [schema, raw] of unmodelled) {
      expect(typebox(schema, raw).valid).toBe(true);
      expect(fast(schema, raw)).toBeUndefined();
    }
  });
});
