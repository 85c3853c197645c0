/** The crash matrix (crash-matrix-suite.ts) on JSONL session files. */
import { describe, expect, it } from "vitest";
import { crashMatrix, jsonlBackend } from "./crash-matrix-suite.js";

const matrix = crashMatrix(jsonlBackend());

describe("crash matrix (JSONL)", () => {
  it(`a JSONL session killed with SIGKILL at ${matrix.count} seeded points reopens consistent, loses nothing and continues`, async () => {
    const { detail, summary } = await matrix.run();
    expect(detail).toEqual([]);
    expect(summary.kills).toBeGreaterThan(matrix.count / 2);
  }, 600_000);
});
