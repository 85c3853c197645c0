import { createTestHarness, toolContext } from "@rein/sdk/testing";
import { describe, expect, it } from "vitest";
import tools, { daysBetween, now } from "../src/index.js";

const context = toolContext();
const text = (result: { content: { type: string; text?: string }[] }) => result.content[0]?.text ?? "";

describe("the tools-time pack", () => {
  it("days_between counts whole days in either direction", async () => {
    expect(text(await daysBetween.execute({ from: "2026-01-01", to: "2026-03-01" }, context))).toBe("59");
    expect(text(await daysBetween.execute({ from: "2026-03-01", to: "2026-01-01" }, context))).toBe("-59");
  });

  it("now answers in the requested zone and refuses an unknown one", async () => {
    expect(text(await now.execute({ timeZone: "Asia/Tokyo" }, context))).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} Asia\/Tokyo$/,
    );
    const bad = await now.execute({ timeZone: "Mars/Olympus" }, context);
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain("unknown time zone");
  });

  it("loads as a tool pack and the model's call is validated against the schema", async () => {
    const t = await createTestHarness({
      tools,
      script: [
        { toolCalls: [{ name: "days_between", args: { from: "2026-01-01", to: "not a date" } }] },
        { toolCalls: [{ name: "days_between", args: { from: "2026-01-01", to: "2026-01-31" } }] },
        "30 days.",
      ],
    });
    await t.prompt("how many days in January after the 1st?");
    const results = t.messages().filter((m) => m.role === "toolResult");
    expect(results[0]).toMatchObject({ isError: true });
    expect(results[1]).toMatchObject({ isError: false, content: [{ type: "text", text: "30" }] });
    await t.dispose();
  });
});
