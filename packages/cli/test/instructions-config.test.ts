/** The `instructions` config option: `{ enabled?: boolean }`, every other shape a config error naming the option. */
import { describe, expect, it } from "vitest";
import { validateConfig } from "../src/config/validate-config.js";

const source = (instructions: string) => ({
  file: "/p/rein.config.ts",
  text: `export default {\n  model: "x/y",\n  instructions: ${instructions},\n};\n`,
});

describe("instructions option", () => {
  it("accepts { enabled: false } and leaves it as given", () => {
    const config = validateConfig(
      { model: "x/y", instructions: { enabled: false } },
      source("{ enabled: false }"),
    );
    expect(config.instructions).toEqual({ enabled: false });
  });

  it.each([
    [{ enabled: "no" }, "instructions.enabled: expected a boolean"],
    [{ files: false }, "instructions.files: expected absent (the only option is enabled)"],
    [false, "instructions: expected { enabled?: boolean }"],
  ])("refuses %j", (instructions, message) => {
    expect(() =>
      validateConfig({ model: "x/y", instructions } as never, source(JSON.stringify(instructions))),
    ).toThrow(expect.objectContaining({ code: "config", message: expect.stringContaining(message) }));
  });
});
