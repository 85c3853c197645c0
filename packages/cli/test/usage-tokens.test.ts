/**
 * Token counts print as `toLocaleString("en-US")` would (`1,234,567`), without it:
 * its first call loads ICU's locale data, ~0.1 s between the last response and exit.
 */
import { expect, it } from "vitest";
import { tokens } from "../src/usage/usage-totals.js";

it("groups digits by thousands with commas, exactly as en-US does", () => {
  const values = [
    0, 5, 20, 999, 1000, 1001, 12_345, 999_999, 1_000_000, 1_234_567, 98_765_432_109, -1234, -5,
  ];
  for (const value of values) expect(tokens(value), String(value)).toBe(value.toLocaleString("en-US"));
  for (let n = 1; n < 10 ** 13; n = n * 7 + 3) expect(tokens(n), String(n)).toBe(n.toLocaleString("en-US"));
});
