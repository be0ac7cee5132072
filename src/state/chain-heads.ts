import type { ObjectStore } from '../store/store.js';

/** The newest block a run found on a chain: where the next run starts its head search. */
export interface KnownHead {
  block: number;
  /** Unix seconds of that block. */
  time: number;
  /** The chain's mean block time, from two blocks far apart: aims the next run's probe of a block time. */
  seconds_per_block?: number;
}

export type KnownHeads = Record<string, KnownHead>;

const key = (jobName: string) => `_state/${jobName}/chain-heads.json`;

/**
 * Chain heads kept beside the job's state (`_state/<job>/chain-heads.json`). Only a hint: a
 * missing, unreadable or stale file costs a longer search, never a wrong head, since every
 * block it names is probed again.
 */
export async function readKnownHeads(store: ObjectStore, jobName: string): Promise<KnownHeads> {
  try {
    const got = await store.get(key(jobName));
    if (!got) return {};
    const parsed = JSON.parse(got.body.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return {};
    const out: KnownHeads = {};
    for (const [chain, h] of Object.entries(parsed as Record<string, Partial<KnownHead>>)) {
      if (!Number.isSafeInteger(h?.block) || !Number.isSafeInteger(h?.time)) continue;
      const spacing = h.seconds_per_block;
      out[chain] = {
        block: h.block!,
        time: h.time!,
        ...(typeof spacing === 'number' && Number.isFinite(spacing) && spacing > 0 ? { seconds_per_block: spacing } : {}),
      };
    }
    return out;
  } catch {
    return {};
  }
}

/** Merges `found` into the file (newest block per chain wins). */
export async function writeKnownHeads(store: ObjectStore, jobName: string, found: KnownHeads): Promise<void> {
  if (Object.keys(found).length === 0) return;
  const merged = await readKnownHeads(store, jobName);
  for (const [chain, h] of Object.entries(found)) {
    if (!merged[chain] || merged[chain].block < h.block) merged[chain] = h;
  }
  await store.put(key(jobName), JSON.stringify(merged, null, 2), { contentType: 'application/json' });
}
