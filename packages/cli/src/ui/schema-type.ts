/**
 * A JSON schema (typebox) as a short TypeScript-like type for `rein tools`:
 * `"a" | "b"`, `string[]`, `{ path: string; limit?: number }`. Invariant: never
 * claims more than the schema says: what it cannot render is `unknown`.
 */

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const MAX_DEPTH = 3;

export function schemaType(schema: unknown, depth = 0): string {
  if (schema === true || (isSchema(schema) && Object.keys(schema).length === 0)) return "any";
  if (!isSchema(schema)) return "unknown";
  if ("const" in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  const union = (schema.anyOf ?? schema.oneOf) as unknown;
  if (Array.isArray(union)) return [...new Set(union.map((member) => schemaType(member, depth)))].join(" | ");
  if (Array.isArray(schema.allOf)) return schema.allOf.map((member) => schemaType(member, depth)).join(" & ");
  const type = schema.type;
  if (Array.isArray(type)) return type.map((t) => schemaType({ ...schema, type: t }, depth)).join(" | ");
  switch (type) {
    case "string":
    case "number":
    case "boolean":
    case "null":
      return type;
    case "integer":
      return "integer";
    case "array": {
      if (Array.isArray(schema.prefixItems)) {
        return `[${schema.prefixItems.map((item) => schemaType(item, depth + 1)).join(", ")}]`;
      }
      const item = schemaType(schema.items ?? {}, depth + 1);
      return item.includes(" ") ? `(${item})[]` : `${item}[]`;
    }
    case "object":
      return objectType(schema, depth);
    default:
      return "unknown";
  }
}

function objectType(schema: Schema, depth: number): string {
  const properties = isSchema(schema.properties) ? schema.properties : undefined;
  if (properties && Object.keys(properties).length > 0) {
    if (depth >= MAX_DEPTH) return "object";
    const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
    const fields = Object.entries(properties).map(
      ([name, value]) => `${name}${required.has(name) ? "" : "?"}: ${schemaType(value, depth + 1)}`,
    );
    return `{ ${fields.join("; ")} }`;
  }
  if (isSchema(schema.patternProperties)) {
    const [value] = Object.values(schema.patternProperties);
    return `Record<string, ${schemaType(value, depth + 1)}>`;
  }
  if (isSchema(schema.additionalProperties)) {
    return `Record<string, ${schemaType(schema.additionalProperties, depth + 1)}>`;
  }
  return "object";
}
