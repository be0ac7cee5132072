/**
 * The one registry of datasets. Every list of datasets (job schema enums, the run's and the
 * warehouse's lookups, the planner's order, the estimator's page caps, the documentation) is
 * derived from DATASET_LIST, and every dataset-specific rule is a check of the capabilities a
 * dataset module declares. Adding a dataset: its module, one line here.
 */
import { aggregatesDataset } from './aggregates.js';
import { blocksDataset } from './blocks.js';
import type { Dataset, DatasetCapabilities } from './dataset.js';
import { eventsDataset } from './events.js';
import { nftHoldingsDataset } from './nft-holdings.js';
import type { TargetKind } from './target-kinds.js';
import { transactionsDataset } from './transactions.js';

/** Every dataset, in the order units and documentation list them. */
const DATASET_LIST = [transactionsDataset, eventsDataset, aggregatesDataset, nftHoldingsDataset, blocksDataset] as const;

export type DatasetName = (typeof DATASET_LIST)[number]['name'];

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each dataset has its own row and target types; this list of all of them erases them
export type AnyListDataset = Dataset<any, any, DatasetName, TargetKind>;

export const DATASET_NAMES: readonly DatasetName[] = DATASET_LIST.map((d) => d.name);

/** The dataset modules by name. */
export const DATASETS = Object.fromEntries(DATASET_LIST.map((d) => [d.name, d])) as unknown as Record<DatasetName, AnyListDataset>;

export function capabilitiesOf(name: DatasetName): DatasetCapabilities {
  return DATASETS[name].capabilities;
}

/** Names of the datasets whose capabilities pass `test`, in registry order. */
export function datasetsWhere(test: (c: DatasetCapabilities) => boolean): DatasetName[] {
  return DATASET_NAMES.filter((n) => test(capabilitiesOf(n)));
}

/** The datasets a target kind may list (non-empty: a job schema enum). */
export function datasetsFor(kind: TargetKind): [DatasetName, ...DatasetName[]] {
  return datasetsWhere((c) => c.targetKinds.includes(kind)) as [DatasetName, ...DatasetName[]];
}

/** The datasets a target of this kind exports when its file lists none. */
export function defaultDatasets(kind: TargetKind): DatasetName[] {
  return datasetsWhere((c) => c.defaultFor.includes(kind));
}

export function isSnapshot(name: DatasetName): boolean {
  return capabilitiesOf(name).extent === 'snapshot';
}

export type { DatasetCapabilities } from './dataset.js';
export type { TargetKind, StreamTarget, StreamTargetOf } from './target-kinds.js';
