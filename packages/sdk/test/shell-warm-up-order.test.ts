/**
 * The parser's warm-up (a command line touching most of the grammar, run once at load)
 * never delays a real analysis: a shell call that arrived while the grammar was loading
 * is analysed first, and the warm-up runs after it, in a task of its own.
 */
import { describe, expect, it } from "vitest";
import { ShellAnalysis } from "../src/shell/analyze.js";
import { analyzeShell, loadShellParser } from "../src/shell/index.js";
import { WARM_UP } from "../src/shell/parser.js";

describe("the shell parser's warm-up", () => {
  it("runs after an analysis that was waiting for the grammar, not before it", async () => {
    const order: string[] = [];
    const run = ShellAnalysis.prototype.run;
    ShellAnalysis.prototype.run = function (this: ShellAnalysis, source: string) {
      order.push(source === WARM_UP ? "warm-up" : source);
      return run.call(this, source);
    };
    try {
      const warming = loadShellParser();
      const facts = analyzeShell("echo first");
      await Promise.all([warming, facts]);
      expect((await facts).commands.map((command) => command.argv)).toEqual([["echo", "first"]]);
      expect(order).toEqual(["echo first", "warm-up"]);
    } finally {
      ShellAnalysis.prototype.run = run;
    }
  });
});
