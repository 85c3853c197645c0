/**
 * "Did you mean": the known names closest to a misspelt one, for every error
 * message that offers one (plugin options, hook and tool names, config keys,
 * model ids, commands). Invariant: only plausible matches are offered - a few
 * edits, scaled to the name's length - so an unrelated name never gets a hint.
 */

/**
 * Edit distance counting insertions, deletions, substitutions and swaps of two
 * neighbouring letters (`modle` is one edit from `model`), case-insensitive.
 */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  // Three rows: the one before the previous is needed for swaps.
  let before: number[] = [];
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1])
        best = Math.min(best, (before[j - 2] as number) + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[y.length] as number;
}

/** The most edits a match of `name` may need: 2, or a quarter of its length for long names. */
export const allowedEdits = (name: string) => Math.max(2, Math.floor(name.length / 4));

/** Up to `limit` candidates within `maxEdits` of `name`, closest first (ties in the candidates' order). */
export function closestNames(
  name: string,
  candidates: Iterable<string>,
  { limit = 3, maxEdits = allowedEdits(name) }: { limit?: number; maxEdits?: number } = {},
): string[] {
  const scored: { candidate: string; distance: number; order: number }[] = [];
  let order = 0;
  for (const candidate of candidates) {
    // Length alone rules most candidates out before the quadratic distance.
    if (Math.abs(candidate.length - name.length) > maxEdits) continue;
    const distance = editDistance(name, candidate);
    if (distance <= maxEdits) scored.push({ candidate, distance, order: order++ });
  }
  scored.sort((p, q) => p.distance - q.distance || p.order - q.order);
  return [...new Set(scored.map((s) => s.candidate))].slice(0, limit);
}

/** The candidate closest to `name`, or `undefined` when none is close enough. */
export function closestName(name: string, candidates: Iterable<string>): string | undefined {
  return closestNames(name, candidates, { limit: 1 })[0];
}

/** `; did you mean "x"?` or nothing, to append to a message. */
export function didYouMean(name: string, candidates: Iterable<string>): string {
  const match = closestName(name, candidates);
  return match === undefined ? "" : `; did you mean "${match}"?`;
}
