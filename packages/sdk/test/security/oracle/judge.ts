/**
 * The differential oracle's verdict on one script: the analysis against what bash
 * really did.
 *
 * Invariant (security invariant 1): when the analysis says it understood everything
 * (`unknown` is empty), every program bash executed must be named by a listed
 * command (its argv[0], its first word as written, or one of its wrappers), and
 * every file bash itself opened for writing must be the target of a listed
 * redirection (or of one whose target is decided at run time). Anything else is a
 * divergence.
 */
import path from "node:path";
import { analyzeShell, type ShellCommandFacts } from "@rein/sdk/shell";
import type { Trace } from "./bash-trace.js";
import { traceBash } from "./bash-trace.js";
import { type Part, render, shrink } from "./generator.js";

export interface Divergence {
  script: string;
  unlisted: string[];
  unlistedWrites: string[];
}

/** The names the analysis lists as run: argv[0], the first word as written, wrappers. */
export function listedPrograms(facts: ShellCommandFacts): Set<string> {
  const names = new Set<string>();
  for (const command of facts.commands) {
    for (const word of [
      command.argv[0],
      command.original[0],
      ...command.wrappers.map((w) => w.split(" ")[0]),
    ])
      if (word) names.add(path.posix.basename(word));
  }
  return names;
}

const DYNAMIC_TARGET = /[$`*?[{~]/;

export function judge(
  facts: ShellCommandFacts,
  trace: Trace,
  evenIfUnknown = false,
): Omit<Divergence, "script"> | undefined {
  if (facts.unknown.length > 0 && !evenIfUnknown) return undefined;
  const names = listedPrograms(facts);
  const unlisted = [...new Set(trace.executed.map((p) => path.posix.basename(p)))].filter(
    (n) => !names.has(n),
  );
  const targets = facts.commands.flatMap((c) =>
    c.redirections.filter((r) => /[>]/.test(r.op)).map((r) => r.target),
  );
  const dynamic = targets.some((t) => DYNAMIC_TARGET.test(t));
  const named = new Set(targets.map((t) => path.posix.normalize(t)));
  const unlistedWrites = dynamic
    ? []
    : [...new Set(trace.shellWrites)].filter((f) => !named.has(path.posix.normalize(f)));
  if (unlisted.length === 0 && unlistedWrites.length === 0) return undefined;
  return { unlisted, unlistedWrites };
}

/** One unknown script in this many is run too, to show the generator hides code that really runs. */
export const UNKNOWN_SAMPLE = 20;

export interface OracleCounts {
  generated: number;
  /** Scripts run in bash (the ones the analysis fully understood: the others cannot diverge). */
  executed: number;
  /** Scripts the analysis marked unknown (not judged: an unknown part is covered by no allow). */
  unknown: number;
  /** Of those, every `UNKNOWN_SAMPLE`th is run anyway: how many ran a program or wrote a file the analysis did not list (why they had to be unknown). */
  unknownRun: number;
  unknownRanUnlisted: number;
  divergences: Divergence[];
}

/** Runs the scripts the analysis calls understood in bash, `concurrency` at a time, and judges each. */
export async function runOracle(parts: readonly Part[], concurrency: number): Promise<OracleCounts> {
  const counts: OracleCounts = {
    generated: parts.length,
    executed: 0,
    unknown: 0,
    unknownRun: 0,
    unknownRanUnlisted: 0,
    divergences: [],
  };
  let next = 0;
  const worker = async () => {
    while (next < parts.length) {
      const part = parts[next++] as Part;
      const script = render(part);
      const facts = await analyzeShell(script);
      if (facts.unknown.length > 0) {
        counts.unknown++;
        if (counts.unknown % UNKNOWN_SAMPLE === 0) {
          counts.unknownRun++;
          if (judge(facts, await traceBash(script), true)) counts.unknownRanUnlisted++;
        }
        continue;
      }
      counts.executed++;
      const verdict = judge(facts, await traceBash(script));
      if (verdict) counts.divergences.push(await minimal(part, verdict));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return counts;
}

/** Shrinks a diverging script while it still diverges: the smallest script shows the cause. */
export async function minimal(part: Part, verdict: Omit<Divergence, "script">): Promise<Divergence> {
  let best = part;
  let found = verdict;
  let improved = true;
  let budget = 200;
  while (improved && budget > 0) {
    improved = false;
    for (const candidate of shrink(best)) {
      if (--budget <= 0) break;
      const script = render(candidate);
      const facts = await analyzeShell(script);
      if (facts.unknown.length > 0) continue;
      const again = judge(facts, await traceBash(script));
      if (again) {
        best = candidate;
        found = again;
        improved = true;
        break;
      }
    }
  }
  return { script: render(best), ...found };
}
