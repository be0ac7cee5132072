/**
 * The unit key: the stable identity of a unit's data stream, and the name of its windows' state
 * (`_state/<job>/units/<unit key>.json`, `_state/<job>/completed/<unit key>/<start>_<end>.json`):
 *
 *   <dataset>/<target>[~<variant>]/<chain id>/<axis>
 *
 * - target: the target's key (a lowercase address, a name, `<address>_<topic0>` for an event, `chain`);
 * - variant: a hash of the query shape (filters, aggregates, NFT types) when the unit has one, so
 *   a changed query never reuses another query's completed windows (nor lands beside their rows
 *   in one table: src/state/table-queries.ts);
 * - axis: `block` or `time`, what the unit's windows count.
 *
 * Keys already written at destinations name their state: the format never changes.
 */
import { createHash } from 'node:crypto';
import { DATASET_NAMES, isSnapshot, type DatasetName } from '../datasets/index.js';
import type { Axis } from '../job/schema.js';

export interface StreamKey {
  /** A dataset of the registry in every key this version writes; a key read from state may name another. */
  dataset: string;
  /** The target's key, without the variant. */
  target: string;
  /** Hash of the query shape; null when the unit has none. */
  variant: string | null;
  chainId: number;
  axis: Axis;
}

export function formatStreamKey(k: StreamKey & { dataset: DatasetName }): string {
  return `${k.dataset}/${targetWithVariant(k)}/${k.chainId}/${k.axis}`;
}

const targetWithVariant = (k: StreamKey) => (k.variant === null ? k.target : `${k.target}~${k.variant}`);

/** The parts of a unit key; null when `key` is not one. */
export function parseStreamKey(key: string): StreamKey | null {
  const parts = key.split('/');
  if (parts.length < 4) return null;
  const axis = parts.at(-1);
  const chain = parts.at(-2)!;
  if ((axis !== 'block' && axis !== 'time') || !/^\d+$/.test(chain)) return null;
  const targetPart = parts.slice(1, -2).join('/');
  const variant = /~([0-9a-f]+)$/.exec(targetPart);
  return {
    dataset: parts[0]!,
    target: variant ? targetPart.slice(0, variant.index) : targetPart,
    variant: variant ? variant[1]! : null,
    chainId: Number(chain),
    axis,
  };
}

/** The axis of a unit key's windows ('time' when `key` is not a unit key). */
export function axisOfStreamKey(key: string): Axis {
  return parseStreamKey(key)?.axis ?? 'time';
}

/** A unit of a snapshot dataset: no block edges, no reorganisation checks, no rewind. */
export function isSnapshotStream(k: StreamKey): boolean {
  return (DATASET_NAMES as readonly string[]).includes(k.dataset) && isSnapshot(k.dataset as DatasetName);
}

/** What the units of one query on every chain share: the key without its chain. */
export function keyAcrossChains(k: StreamKey): string {
  return `${k.dataset}/${targetWithVariant(k)}/${k.axis}`;
}

/**
 * A shard (0 <= shard < count) named by a unit key alone: the unit's lead when shards divide its
 * windows (src/plan/shard-split.ts), the same whatever the unit's windows are.
 */
export function shardOfStreamKey(key: string, count: number): number {
  return parseInt(createHash('sha256').update(key).digest('hex').slice(0, 8), 16) % count;
}
