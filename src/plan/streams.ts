/**
 * The streams of a job: every dataset x target (x query variant) x chain, each with its unit key.
 * Made in one place, once per job value (jobStreams): the run, plan, verify, recount, repair, shards,
 * tables and claims all take this list instead of deriving it again.
 */
import { createHash } from 'node:crypto';
import { capabilitiesOf, DATASET_NAMES, isSnapshot, type DatasetName, type StreamTarget } from '../datasets/index.js';
import { NFT_TYPES, type Job, type Target } from '../job/schema.js';
import { unitTargets } from './stream-targets.js';
import { formatStreamKey } from './stream-key.js';

function shortHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 8);
}

/**
 * A stream: one dataset x target (x query variant) x chain of a job, on its axis; its unit key names
 * its state. Every window a run exports belongs to one stream.
 */
export interface Stream {
  dataset: DatasetName;
  target: StreamTarget;
  targetKey: string;
  chainId: number;
  filters: Record<string, string>;
  unitKey: string;
  order: readonly number[];
}

function sortedRecord(r: Record<string, string>): [string, string][] {
  return Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A field of a stream's query that the job file sets (its path in the file), and what it adds. */
export interface QueryField {
  field: string;
  /** What the field adds to the stream's variant; absent at the field's default. */
  shape?: unknown;
}

/**
 * What a stream's query is made of besides its target, chain and windows: the target's filters, the
 * job's aggregate expressions, a wallet's NFT types (those its dataset reads). A field at its default
 * (no filters, every NFT type) adds nothing to the variant, so the keys already written stay.
 */
export function queryFields(job: Pick<Job, 'aggregates'>, t: Target, dataset: DatasetName): QueryField[] {
  const can = capabilitiesOf(dataset);
  const at = `targets[${t.index}]`;
  const fields: QueryField[] = [];
  if (can.filters !== 'none')
    fields.push({ field: `${at}.filters`, ...(Object.keys(t.filters).length ? { shape: sortedRecord(t.filters) } : {}) });
  if (can.readsJobAggregates) fields.push({ field: 'aggregates', shape: job.aggregates });
  if (can.targetOption === 'nft_types' && t.kind === 'wallet')
    fields.push({ field: `${at}.nft_types`, ...(t.nft_types.length !== NFT_TYPES.length ? { shape: [...t.nft_types].sort() } : {}) });
  return fields;
}

/** Every stream of the job, with its keys, in a deterministic order (see jobStreams). */
function streamsOf(job: Job): Stream[] {
  const axis = job.range?.by ?? 'time';
  const specs: Stream[] = [];
  const add = (t: Target, dataset: DatasetName, target: StreamTarget, targetKey: string, eventIndex: number) => {
    const filters = capabilitiesOf(dataset).filters === 'none' ? {} : t.filters;
    const shape = queryFields(job, t, dataset).flatMap((p) => ('shape' in p ? [p.shape] : []));
    const variant = shape.length ? shortHash(shape) : null;
    const unitAxis = isSnapshot(dataset) ? 'time' : axis;
    for (const chainId of t.chains) {
      specs.push({
        dataset,
        target,
        targetKey,
        chainId,
        filters,
        unitKey: formatStreamKey({ dataset, target: targetKey, variant, chainId, axis: unitAxis }),
        order: [DATASET_NAMES.indexOf(dataset), t.index, eventIndex, chainId],
      });
    }
  };
  for (const t of job.targets) {
    for (const dataset of t.datasets) for (const u of unitTargets(t)) add(t, dataset, u.target, u.key, u.eventIndex);
  }
  const cmp = (a: readonly number[], b: readonly number[]) => {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
    return 0;
  };
  return specs.sort((a, b) => cmp(a.order, b.order));
}

const made = new WeakMap<Job, readonly Readonly<Stream>[]>();

/**
 * The job's streams, in a deterministic order; made once per job value (a job whose wallet names
 * were resolved is another value), frozen so no caller changes what the others read.
 */
export function jobStreams(job: Job): readonly Readonly<Stream>[] {
  let streams = made.get(job);
  if (!streams) made.set(job, (streams = Object.freeze(streamsOf(job).map((s) => Object.freeze(s)))));
  return streams;
}
