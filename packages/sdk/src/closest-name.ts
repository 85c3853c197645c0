/**
 * "Did you mean": the known name closest to a misspelt one, for error messages
 * (plugin options, hook names). Invariant: a suggestion is only offered when it is
 * plausibly the same word (a few edits, or the same letters in another case), so
 * an unrelated name never gets a misleading hint.
 */
import { distance } from "fastest-levenshtein";

/** The candidate closest to `name`, or `undefined` when none is close enough. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = candidate.toLowerCase() === name.toLowerCase() ? 0 : distance(name, candidate);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  if (best === undefined) return undefined;
  const allowed = Math.max(2, Math.floor(Math.max(name.length, best.length) / 3));
  return bestDistance <= allowed ? best : undefined;
}

/** `; did you mean "x"?` or nothing, to append to a message. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const match = closestName(name, candidates);
  return match === undefined ? "" : `; did you mean "${match}"?`;
}
