/** The `decisions` config option: `{ trail?: boolean }`, every other shape a config error naming the option and line. */
import { describe, expect, it } from "vitest";
import { validateConfig } from "../src/config/validate-config.js";

const source = (decisions: string) => ({
  file: "/p/rein.config.ts",
  text: `export default {\n  model: "x/y",\n  decisions: ${decisions},\n};\n`,
});

describe("decisions option", () => {
  it("accepts { trail: true } and leaves it as given", () => {
    const config = validateConfig({ model: "x/y", decisions: { trail: true } }, source("{ trail: true }"));
    expect(config.decisions).toEqual({ trail: true });
  });

  it.each([
    [{ trail: "yes" }, "decisions.trail: expected a boolean"],
    [{ trial: true }, "decisions.trial: expected the only decision option, trail"],
    [true, "decisions: expected { trail?: boolean }"],
  ])("refuses %j", (decisions, message) => {
    expect(() => validateConfig({ model: "x/y", decisions }, source(JSON.stringify(decisions)))).toThrow(
      expect.objectContaining({ code: "config", message: expect.stringContaining(message) }),
    );
  });
});
