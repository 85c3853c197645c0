/**
 * "Did you mean" offers only plausible matches (closest-name.ts, the one "did you mean" of every package): a few edits,
 * scaled to the name's length, case-insensitive, closest first.
 */
import { describe, expect, it } from "vitest";
import { closestNames, editDistance } from "../src/closest-name.js";

describe("closestNames", () => {
  it("finds a typo, closest first, at most `limit`", () => {
    expect(closestNames("modle", ["models", "model", "plugins"])).toEqual(["model", "models"]);
    expect(closestNames("modle", ["models", "model"], { limit: 1 })).toEqual(["model"]);
  });

  it("ignores case", () => {
    expect(editDistance("Model", "model")).toBe(0);
    expect(closestNames("THINKINGLEVEL", ["thinkingLevel"])).toEqual(["thinkingLevel"]);
  });

  it("offers nothing unrelated", () => {
    expect(closestNames("frobnicate", ["run", "chat", "export", "sessions"])).toEqual([]);
    expect(closestNames("ab", ["xyz"])).toEqual([]);
  });

  it("allows more edits for longer names", () => {
    expect(closestNames("anthropic/claude-sonet-45", ["anthropic/claude-sonnet-4-5"])).toEqual([
      "anthropic/claude-sonnet-4-5",
    ]);
    expect(closestNames("gpt", ["gpt-4o-mini"])).toEqual([]);
  });
});

describe("editDistance", () => {
  it.each([
    ["run", "run", 0],
    ["rnu", "run", 1],
    ["modle", "model", 1],
    ["sesions", "sessions", 1],
    ["kitten", "sitting", 3],
    ["", "abc", 3],
  ])("%s -> %s: %i", (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });
});
