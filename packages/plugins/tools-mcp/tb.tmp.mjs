import { validateToolArguments } from "@mariozechner/pi-ai";

const schema = {
  type: "object",
  properties: {
    name: { default: "README.md.gz", type: "string" },
    data: { type: "string", format: "uri" },
    n: { type: "number" },
    e: { $ref: "#/$defs/E" },
  },
  required: ["data"],
  $defs: { E: { type: "string", enum: ["a", "b"] } },
  additionalProperties: false,
  $schema: "http://json-schema.org/draft-07/schema#",
};
const tool = { name: "t", parameters: schema };
for (const args of [
  { data: "https://x.y/z", n: "3", e: "a" },
  { data: "not a uri" },
  { data: "https://x", e: "c" },
  { data: "https://x", extra: 1 },
]) {
  try {
    console.log("ok", validateToolArguments(tool, { type: "toolCall", id: "1", name: "t", arguments: args }));
  } catch (e) {
    console.log("ERR", e.message.split("\n").slice(0, 3).join(" | "));
  }
}
