import { Type } from "typebox";
import { describe, expect, it } from "vitest";
import { schemaType } from "../src/ui/schema-type.js";

describe("rein tools renders parameter schemas as types, never a bare any for what the schema says", () => {
  it.each([
    ["a union of literals", Type.Union([Type.Literal("a"), Type.Literal("b")]), '"a" | "b"'],
    ["an enum", Type.Enum(["x", "y"]), '"x" | "y"'],
    ["a literal", Type.Literal(3), "3"],
    ["primitives", Type.Integer(), "integer"],
    ["an array of strings", Type.Array(Type.String()), "string[]"],
    ["an array of a union", Type.Array(Type.Union([Type.String(), Type.Number()])), "(string | number)[]"],
    [
      "an object with optional fields",
      Type.Object({ path: Type.String(), limit: Type.Optional(Type.Number()) }),
      "{ path: string; limit?: number }",
    ],
    ["a record", Type.Record(Type.String(), Type.Boolean()), "Record<string, boolean>"],
    ["a nullable string", Type.Union([Type.String(), Type.Null()]), "string | null"],
    ["an unconstrained value", Type.Unknown(), "any"],
  ])("%s", (_name, schema, expected) => {
    expect(schemaType(schema)).toBe(expected);
  });
});
