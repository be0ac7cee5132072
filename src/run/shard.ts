/**
 * Shards: one worker of N exports a disjoint, stable share of a job's windows, so a backfill
 * spreads over the parallel workers of an engine that already exists (Kubernetes indexed Jobs,
 * AWS Batch array jobs) with no coordinator. Each unit's windows are divided into contiguous parts,
 * one per shard, recorded at the destination (src/plan/shard-split.ts,
 * src/state/shard-split-record.ts), so two shards never write the same window's files or state.
 *
 * Where the shard comes from (first found wins):
 *   --shard i/N                                          (0 <= i < N)
 *   INSIGHT_EXPORT_SHARD=i/N
 *   JOB_COMPLETION_INDEX + JOB_COMPLETION_COUNT         (Kubernetes Indexed Job; set the count)
 *   AWS_BATCH_JOB_ARRAY_INDEX + AWS_BATCH_JOB_ARRAY_SIZE (AWS Batch array job; set the size)
 * An index without its count is an error: every worker would otherwise export the whole job.
 */
import { UserInputError } from '../errors.js';
import { leadShardOf, ownerOf, selectShard, shardOwnsWindow, type Interval, type Plan, type ShardSplit } from '../plan/index.js';

export interface Shard {
  /** 0-based. */
  index: number;
  count: number;
}

export class ShardError extends UserInputError {
  override name = 'ShardError';
}

/** "i/N" with 0 <= i < N; `where` names the flag or variable in the error. */
export function parseShard(text: string, where: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (!m) {
    throw new ShardError(`Invalid shard ${JSON.stringify(text)}`, {
      details: where,
      hint: 'Write the shard as i/N with a 0-based index, e.g. 0/4 ... 3/4 for four workers.',
    });
  }
  return checkedShard(Number(m[1]), Number(m[2]), where);
}

function checkedShard(index: number, count: number, where: string): Shard {
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new ShardError(`The shard count must be a whole number >= 1, not ${count}`, { details: where });
  }
  if (!Number.isSafeInteger(index) || index < 0 || index >= count) {
    throw new ShardError(`Shard index ${index} is outside 0..${count - 1}`, {
      details: where,
      hint: 'Shard indexes are 0-based (as JOB_COMPLETION_INDEX and AWS_BATCH_JOB_ARRAY_INDEX are): i/N with 0 <= i < N.',
    });
  }
  return { index, count };
}

function envInt(env: Record<string, string | undefined>, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  if (!/^\s*\d+\s*$/.test(raw)) {
    throw new ShardError(`${name} is not a whole number: ${JSON.stringify(raw)}`, { details: `environment variable ${name}` });
  }
  return Number(raw);
}

const ENGINES = [
  {
    index: 'JOB_COMPLETION_INDEX',
    count: 'JOB_COMPLETION_COUNT',
    hint: 'Kubernetes sets JOB_COMPLETION_INDEX in Indexed Jobs but not the number of completions: set env JOB_COMPLETION_COUNT to spec.completions (or pass --shard i/N).',
  },
  {
    index: 'AWS_BATCH_JOB_ARRAY_INDEX',
    count: 'AWS_BATCH_JOB_ARRAY_SIZE',
    hint: 'AWS Batch sets AWS_BATCH_JOB_ARRAY_INDEX in array jobs but not the array size: set AWS_BATCH_JOB_ARRAY_SIZE to arrayProperties.size in the job (or pass --shard i/N).',
  },
] as const;

/**
 * The shard of this worker from the --shard flag or the environment; null = not sharded (the
 * whole job). A count of 1 is the whole job too, but is still reported as shard 0/1.
 */
export function resolveShard(flag: string | undefined, env: Record<string, string | undefined> = process.env): Shard | null {
  if (flag !== undefined && flag.trim() !== '') return parseShard(flag, '--shard');
  const own = env.INSIGHT_EXPORT_SHARD;
  if (own !== undefined && own.trim() !== '') return parseShard(own, 'environment variable INSIGHT_EXPORT_SHARD');
  for (const e of ENGINES) {
    const index = envInt(env, e.index);
    if (index === undefined) continue;
    const count = envInt(env, e.count);
    if (count === undefined) {
      throw new ShardError(`${e.index} is set but ${e.count} is not: the number of shards is unknown`, {
        details: `${e.index}=${index}`,
        hint: e.hint,
      });
    }
    return checkedShard(index, count, `${e.index}=${index}, ${e.count}=${count}`);
  }
  return null;
}

/** "i/N", as shown in reports, logs and metrics. */
export function shardLabel(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/**
 * What one run does of the job: everything when not sharded; for a shard, the windows its split
 * gives it (owns) and the per-unit work of the units it leads (their reorganisation check, their
 * `checked/` and `repair/` records; see leadShardOf). A window no span covers is its unit's
 * lead's (a completed window exported before the job was sharded, a marker whose name is not a window's).
 */
export interface Ownership {
  owns(unitKey: string, window: Interval | null): boolean;
  leads(unitKey: string): boolean;
}

export const WHOLE_JOB: Ownership = { owns: () => true, leads: () => true };

export function ownershipOf(shard: Shard | null, split: ShardSplit | null): Ownership {
  if (!shard || !split) return WHOLE_JOB;
  return {
    owns: (unitKey, window) => shardOwnsWindow(split, shard.index, unitKey, window),
    leads: (unitKey) => leadShardOf(unitKey, shard.count) === shard.index,
  };
}

/** The windows of the plan this shard exports (the plan itself when not sharded). */
export function planForShard(plan: Plan, shard: Shard | null, split: ShardSplit | null): Plan {
  return shard && split ? selectShard(plan, split, shard.index) : plan;
}

/**
 * Whether a shard cleans up a pending marker (WindowState.cleanPending) or folds a completed one
 * (WindowState.foldMarkers): only one of a window its split gives it, never one the split does not
 * cover (another shard may have added the span and be committing that window now); a marker whose
 * name is not a window's is the unit's lead's.
 */
export function ownsMarker(shard: Shard | null, split: ShardSplit | null): (unitKey: string, window: Interval | null) => boolean {
  if (!shard || !split) return () => true;
  return (unitKey, window) =>
    window === null ? leadShardOf(unitKey, shard.count) === shard.index : ownerOf(split, unitKey, window.start) === shard.index;
}
