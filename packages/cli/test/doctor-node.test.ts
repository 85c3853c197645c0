import { describe, expect, it } from "vitest";
import { nodeCheck } from "../src/doctor/doctor-node.js";

const on = (day: string) => new Date(`${day}T12:00:00Z`);

describe("rein doctor's Node check", () => {
  it.each([
    ["20.20.2", false],
    ["22.18.0", false],
    ["22.19.0", true],
    ["24.21.0", true],
    ["26.12.0", true],
  ])("Node %s meets Rein's floor of 22.19: %s", (version, ok) => {
    expect(nodeCheck(version, on("2026-12-01")).ok).toBe(ok);
  });

  it("names the floor when the version is below it", () => {
    expect(nodeCheck("20.20.2", on("2026-12-01")).warning).toContain("22.19.0");
  });

  it("warns, without failing, on a line past its end of life", () => {
    const odd = nodeCheck("25.3.0", on("2026-12-01"));
    expect(odd).toMatchObject({ ok: true });
    expect(odd.warning).toContain("2026-06-01");
    const lts = nodeCheck("22.19.0", on("2027-05-01"));
    expect(lts).toMatchObject({ ok: true });
    expect(lts.warning).toContain("end of life");
  });

  it("gives no warning to a supported line, nor to one newer than its table", () => {
    expect(nodeCheck("24.21.0", on("2026-12-01")).warning).toBeUndefined();
    expect(nodeCheck("28.0.0", on("2026-12-01")).warning).toBeUndefined();
  });
});
