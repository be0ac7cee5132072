/**
 * The crash and reorganisation trial files repeat the same kind of kill point many times. By
 * default each runs a seeded sample that still covers every kind of point (the seed is printed and
 * RELIABILITY_SEED=<n> replays it); INSIGHT_EXPORT_LONG_TESTS=1 runs every trial.
 */
export const LONG_TESTS = process.env.INSIGHT_EXPORT_LONG_TESTS === '1';

/** The seed of this run's random draws: RELIABILITY_SEED when set, else one that changes every run. */
export const RELIABILITY_SEED = Number(process.env.RELIABILITY_SEED ?? Date.now() % 1_000_000);

/**
 * Every item under LONG_TESTS; otherwise `perKind` items of each kind (`kindOf`), drawn with
 * `random`, in their original order.
 */
export function sampleEachKind<T>(items: readonly T[], kindOf: (item: T) => string, random: () => number, perKind = 1): T[] {
  if (LONG_TESTS) return [...items];
  const byKind = new Map<string, number[]>();
  items.forEach((item, i) => byKind.set(kindOf(item), [...(byKind.get(kindOf(item)) ?? []), i]));
  const keep = new Set<number>();
  for (const indexes of byKind.values()) {
    const pool = [...indexes];
    for (let k = 0; k < perKind && pool.length > 0; k++) keep.add(pool.splice(Math.floor(random() * pool.length), 1)[0]!);
  }
  return items.filter((_, i) => keep.has(i));
}

/**
 * A test's time limit: `defaultMs` by default; under LONG_TESTS, `trials` × `perTrialMs` (never
 * less than `defaultMs`), so the limit grows with the trials the long mode runs. Budgets are set
 * for a 2-core machine shared with other work (docs/testing.md gives the figures); a test whose
 * trial count is found at run time checks it stays within `trials`, so more trials fail naming
 * the count to raise instead of timing out.
 */
export function longModeTimeout(defaultMs: number, trials: number, perTrialMs: number): number {
  return LONG_TESTS ? Math.max(defaultMs, trials * perTrialMs) : defaultMs;
}
