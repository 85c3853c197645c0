/**
 * @rein/sdk/shell: what a shell command line runs, for gates that must not match raw
 * strings (security invariant 1).
 *
 * `analyzeShell(source)` parses with tree-sitter-bash (WASM, loaded on first use) and
 * lists every simple command with its words unquoted and wrappers unwrapped;
 * whatever cannot be resolved statically is listed in `unknown`.
 *
 * Invariant: never throws. A parse or analysis failure is an `unknown` entry, so a
 * gate that requires `unknown` to be empty fails closed.
 */
import { ShellAnalysis } from "./analyze.js";
import type { ShellCommandFacts } from "./facts.js";
import { loadBashParser, WARM_UP } from "./parser.js";

export type { ShellCommandFacts, ShellRedirection, ShellUnknown, SimpleCommandFacts } from "./facts.js";
export { normaliseGit } from "./wrappers.js";

/** Longest command line analysed; longer ones are `unknown` as a whole. */
export const MAX_SHELL_SOURCE = 256 * 1024;

let warmed: Promise<void> | undefined;

/**
 * Loads the bash grammar now and warms the analysis up (it loads on first use otherwise).
 * The warm-up runs in a task of its own after the load, so an analysis already waiting
 * for the grammar (a first shell call that arrived during the load) goes first rather
 * than behind the warm-up's compilation of the rest of the grammar.
 */
export function loadShellParser(): Promise<void> {
  warmed ??= loadBashParser().then(
    (parser) =>
      new Promise<void>((done) => {
        setImmediate(() => {
          new ShellAnalysis(parser).run(WARM_UP);
          done();
        });
      }),
  );
  warmed.catch(() => {
    warmed = undefined;
  });
  return warmed;
}

/** The simple commands of a bash command line, and what could not be understood. */
export async function analyzeShell(source: string): Promise<ShellCommandFacts> {
  if (typeof source !== "string") {
    return {
      source: String(source),
      commands: [],
      unknown: [{ reason: "the command is not a string", text: String(source) }],
    };
  }
  if (source.length > MAX_SHELL_SOURCE) {
    return {
      source,
      commands: [],
      unknown: [{ reason: `longer than ${MAX_SHELL_SOURCE} characters`, text: source.slice(0, 200) }],
    };
  }
  let parser: Awaited<ReturnType<typeof loadBashParser>>;
  try {
    parser = await loadBashParser();
  } catch (error) {
    return {
      source,
      commands: [],
      unknown: [{ reason: `the shell parser could not load: ${describe(error)}`, text: source }],
    };
  }
  const analysis = new ShellAnalysis(parser);
  try {
    return analysis.run(source);
  } catch (error) {
    return {
      source,
      commands: analysis.commands,
      unknown: [
        ...analysis.unknown,
        { reason: `analysis failed: ${describe(error)}`, text: source.slice(0, 200) },
      ],
    };
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
