/**
 * The split of a sharded job's windows between its shards (src/plan/shard-split.ts), kept beside
 * its state so every shard gives each window the same owner:
 *
 *   _state/<job>/shard-split-<N>.json   { count, units: { <unit key>: [{ start, end, parts: [{ start, shard }] }] } }
 *
 * One record per shard count. Spans are only ever added, with conditional writes (created with
 * If-None-Match: *, then replaced with If-Match on the ETag read): of several shards adding spans
 * at once each retries on the record the others wrote, so no two spans overlap and no recorded
 * span changes. A shard decides the owners of its windows from the record it last read or wrote.
 */
import { PreconditionFailedError } from '../store/errors.js';
import type { ObjectStore } from '../store/store.js';
import { emptySplit, ownerOf, uncoveredSpans, withSpans, type ExpectedRows, type PlannedWindows, type ShardSplit } from '../plan/index.js';
import { StateCorruptError } from './errors.js';

export function shardSplitKey(jobName: string, count: number): string {
  return `_state/${jobName}/shard-split-${count}.json`;
}

/** The recorded split of `count` shards (an empty one when none is recorded), with its ETag (null: no record). */
export async function readShardSplit(
  store: ObjectStore,
  jobName: string,
  count: number,
): Promise<{ split: ShardSplit; etag: string | null }> {
  const key = shardSplitKey(jobName, count);
  const obj = await store.get(key);
  if (!obj) return { split: emptySplit(count), etag: null };
  let body: ShardSplit;
  try {
    body = JSON.parse(obj.body.toString('utf8')) as ShardSplit;
  } catch (err) {
    throw new StateCorruptError(key, `not valid JSON (${(err as Error).message})`);
  }
  const wellFormed =
    body?.count === count &&
    typeof body.units === 'object' &&
    body.units !== null &&
    Object.values(body.units).every(
      (spans) =>
        Array.isArray(spans) &&
        spans.every(
          (s) =>
            Number.isSafeInteger(s?.start) &&
            Number.isSafeInteger(s?.end) &&
            Array.isArray(s.parts) &&
            s.parts.length > 0 &&
            s.parts.every((p) => Number.isSafeInteger(p?.start) && Number.isSafeInteger(p?.shard) && p.shard >= 0 && p.shard < count),
        ),
    );
  if (!wellFormed)
    throw new StateCorruptError(
      key,
      `not a split of ${count} shards: { count, units: { <unit>: [{ start, end, parts: [{ start, shard }] }] } }`,
    );
  return { split: body, etag: obj.etag };
}

export interface SettleOptions {
  /**
   * Expected rows of a window of the units named, to balance new spans by (by window length where
   * unknown); asked only when spans are added, for the units whose windows they cover.
   */
  expected?: (unitKeys: string[]) => Promise<ExpectedRows>;
  /** false: compute the spans the plan's new windows would get, write nothing (dry runs, `plan`). */
  write: boolean;
  /** Called before the write; throws to stop a run that may no longer write (lost lease). */
  guard?: () => void;
}

const covered = (split: ShardSplit, plan: PlannedWindows) => plan.units.every((u) => ownerOf(split, u.unitKey, u.window.start) !== null);

/** Attempts to add spans before giving up: each failed attempt means another shard added spans meanwhile. */
const ATTEMPTS = 20;

/**
 * The split that covers every window of `plan` (the whole job's plan): the recorded one, with new
 * spans for the windows it does not cover written first (unless `write` is false).
 */
export async function settleShardSplit(
  store: ObjectStore,
  jobName: string,
  count: number,
  plan: PlannedWindows,
  opts: SettleOptions,
): Promise<ShardSplit> {
  let expected: ExpectedRows | undefined;
  for (let attempt = 1; ; attempt++) {
    const { split, etag } = await readShardSplit(store, jobName, count);
    if (covered(split, plan)) return split;
    expected ??= await opts.expected?.([
      ...new Set(plan.units.filter((u) => ownerOf(split, u.unitKey, u.window.start) === null).map((u) => u.unitKey)),
    ]);
    const added = uncoveredSpans(split, plan, expected);
    const next = withSpans(split, added);
    if (!opts.write) return next;
    opts.guard?.();
    try {
      await store.put(shardSplitKey(jobName, count), JSON.stringify(next), {
        contentType: 'application/json',
        ...(etag === null ? { ifNoneMatch: '*' as const } : { ifMatch: etag }),
      });
      return next;
    } catch (err) {
      if (!(err instanceof PreconditionFailedError) || attempt >= ATTEMPTS) throw err;
    }
  }
}
