/**
 * How `rein check` reads a call: the `tool(text)` shorthand into the tool's
 * primary argument (first required string parameter), `--arg key=value` /
 * `key:=json`, and JSON calls; every malformed input is a usage error.
 */
import { type AnyAgentTool, Type } from "@rein/harness";
import { describe, expect, it } from "vitest";
import { argumentsFor, parseCall, primaryParameter } from "../src/check/check-call.js";

const tool = (name: string, parameters: ReturnType<typeof Type.Object>): AnyAgentTool => ({
  name,
  description: name,
  parameters,
  execute: () => ({ content: [] }),
});

const bash = tool("bash", Type.Object({ timeout: Type.Optional(Type.Number()), command: Type.String() }));
const edit = tool("edit", Type.Object({ count: Type.Number(), path: Type.String(), oldText: Type.String() }));
const tick = tool("tick", Type.Object({ n: Type.Number() }));
const noStdin = () => {
  throw new Error("stdin must not be read");
};

describe("the primary argument is the first required string parameter", () => {
  it.each([
    [bash, "command"],
    [edit, "path"],
    [tick, undefined],
  ])("%s", (t, expected) => {
    expect(primaryParameter(t)).toBe(expected);
  });
});

describe("parseCall", () => {
  it("reads tool(text) as written, with no unquoting", () => {
    const input = parseCall("bash(git commit -m 'a (b)')", [], noStdin);
    expect(input).toEqual({ name: "bash", args: {}, primary: "git commit -m 'a (b)'" });
    expect(argumentsFor(input, bash)).toEqual({ command: "git commit -m 'a (b)'" });
  });

  it("takes --arg key=value as a string and key:=json as a JSON value", () => {
    const input = parseCall("bash(sleep 9)", ["timeout:=5", "note=a=b"], noStdin);
    expect(argumentsFor(input, bash)).toEqual({ command: "sleep 9", timeout: 5, note: "a=b" });
    expect(parseCall("tick", ["n:=3"], noStdin).args).toEqual({ n: 3 });
  });

  it("reads a JSON call from the argument or from stdin (no argument, or -)", () => {
    const call = '{"name":"bash","arguments":{"command":"ls"}}';
    expect(parseCall(call, [], noStdin)).toEqual({ name: "bash", args: { command: "ls" } });
    expect(parseCall(undefined, [], () => call)).toEqual({ name: "bash", args: { command: "ls" } });
    expect(parseCall("-", ["timeout:=1"], () => call).args).toEqual({ command: "ls", timeout: 1 });
  });

  it.each([
    ["git push", [], "cannot read the call"],
    ["bash(ls", [], "cannot read the call"],
    ["bash", ["=x"], "expected key=value"],
    ["bash", ["command"], "expected key=value"],
    ["bash", ["a=1", "a=2"], "given twice"],
    ["bash", ["n:={"], "expects JSON"],
    ['{"name":"bash","arguments":{"command":"ls"}}', ["command=pwd"], 'already sets "command"'],
    ['{"arguments":{}}', [], 'with a "name"'],
    ['{"name":"bash","arguments":[1]}', [], '"arguments" must be an object'],
    ["{nope", [], "not JSON"],
  ])("refuses %j %j as a usage error", (call, pairs, message) => {
    expect(() => parseCall(call, pairs, noStdin)).toThrow(
      expect.objectContaining({ code: "usage", message: expect.stringContaining(message) }),
    );
  });

  it("refuses the shorthand for a tool without a string parameter, or twice the primary argument", () => {
    expect(() => argumentsFor(parseCall("tick(3)", [], noStdin), tick)).toThrow(
      expect.objectContaining({ code: "usage", message: expect.stringContaining("tick has none") }),
    );
    expect(() => argumentsFor(parseCall("bash(ls)", ["command=pwd"], noStdin), bash)).toThrow(
      expect.objectContaining({ code: "usage", message: expect.stringContaining("already gives command") }),
    );
  });
});
