/** The closest of the names a place allows to a name the user wrote, for "did you mean" hints. */

export function levenshtein(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
}

/** The closest candidate within a small edit distance (or the same name in another case/separator). */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const norm = (s: string) => s.toLowerCase().replace(/[-_\s]/g, '');
  let best: string | undefined;
  let bestD = Number.POSITIVE_INFINITY;
  for (const c of candidates) {
    const d = norm(c) === norm(word) ? 0 : levenshtein(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  const limit = Math.max(1, Math.floor(word.length / 3));
  return bestD <= limit ? best : undefined;
}
