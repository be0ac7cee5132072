import type { Abi } from 'viem';
import type { Recount } from './recount.js';
import type { TargetKind, StreamTargetOf } from './target-kinds.js';
import { column, isoTime, type Column, type Row } from '../columns/columns.js';
import { BLOCK_FIELDS } from '../columns/record-fields.js';
import type { HeldBody, InsightClient } from '../source/client.js';
import type { Filters, ListQuery } from '../source/query.js';
import type { ChainDone, RecordPage, RejectReason, SliceAxis } from '../source/paginator.js';

/** What a range and its windows count: UTC seconds or block numbers (the glossary's axis). */
export type Axis = 'block' | 'time';

/** Where in the source a record sits: the paginator's cursor when a window must be split. */
export interface RecordPosition {
  block_number: number;
  block_timestamp: number;
  /** The block's hash, where the record carries one (checked against blocks the run resolved). */
  block_hash?: string | null;
}

/** The part of a request a dataset needs from the paginator for one slice (always page 0). */
export interface PageRequest {
  chainIds: number[];
  /** Slice bounds plus the job's own filters, already as filter_* names. */
  filters: NonNullable<ListQuery['filters']>;
  limit: number;
  /** When the answer may be decoded (see HeldBody). */
  held?: HeldBody;
}

/** One window of a dataset that streams its windows itself (see StreamedCollection). */
export interface WindowRequest {
  /** Every chain of the shared group; each ends with its own ChainDone. */
  chainIds: number[];
  axis: Axis;
  start: number;
  /** Exclusive. */
  end: number;
  /** The job's own filter_* values (window bounds not included). */
  filters: Filters;
  /** Rows per page. */
  limit: number;
  signal?: AbortSignal | undefined;
}

/**
 * What a dataset is, as the job, planner, estimator and state need to know it (without naming it).
 * The registry (src/datasets/index.ts) derives every list of datasets from these.
 */
export interface DatasetCapabilities<Kind extends TargetKind = TargetKind> {
  /** The job target kinds that may list the dataset, and those for which it is the default. */
  readonly targetKinds: readonly Kind[];
  readonly defaultFor: readonly Kind[];
  /**
   * ranged: windows over the job's range; snapshot: one window of the UTC day of the run (no
   * range, no block edges, no reorganisation checks), exported again by every run.
   */
  readonly extent: 'ranged' | 'snapshot';
  /** What the job's range may count for a ranged dataset (a job counting another axis is refused); none for a snapshot. */
  readonly rangeAxes: readonly Axis[];
  /** Pages the service serves a query at most (the estimate's page cap); without it the dataset has no cap. */
  readonly pageCap?: number;
  /**
   * What one request of a window serves, for up to source.chain_ids_per_request chains: a page of rows (the
   * default), or one block number (a window of n blocks costs n requests, whatever its rows).
   */
  readonly requestServes?: 'page' | 'block';
  /** list-route: the job's filters of the target kind's list operation; none: it takes no filters. */
  readonly filters: 'list-route' | 'none';
  /** Computed from the job's `aggregates:` section (part of its units' identity; required when listed). */
  readonly readsJobAggregates?: true;
  /** A wallet-target option that only this dataset reads. */
  readonly targetOption?: 'nft_types';
}

/** What a dataset's target is built with besides its unit target: the job's options and the unit's filters. */
export interface TargetOptions {
  /** The job file, for messages. */
  readonly jobFile: string;
  readonly decode: boolean;
  /** The job's `aggregates:` section. */
  readonly aggregates: { readonly group_by: readonly string[]; readonly aggregate: readonly string[] } | null;
  /** The unit's filter_* values. */
  readonly filters: Readonly<Record<string, string>>;
  /** An ABI file (absolute path), read once per run. */
  abi(path: string): Promise<Abi>;
}

/** Paged by block: pageWindow cuts a window into slices over sliceAxes and fetches page 0 of each. */
export interface PagedCollection<Target, Rec> {
  readonly kind: 'paged';
  /** Filter names bounding a window on each axis. */
  readonly windowFilters: Record<Axis, { gte: string; lt: string }>;
  /** The service's count of a window's rows (verify --recount, settling), with the target it needs. */
  readonly recount: Recount<object>;
  /**
   * The axes pageWindow cuts a window's slices on: the window's axis, then finer positions of a
   * row, down to one that holds at most two rows (see blockSliceAxes).
   */
  sliceAxes(axis: Axis): SliceAxis<Rec>[];
  fetchPage(client: InsightClient, target: Target, req: PageRequest): Promise<Rec[]>;
  /**
   * Why a record the service sent for `target` is not the target's (another wallet, contract or
   * event), or null when it is. The paginator drops and counts such records; it checks their chain
   * and slice itself.
   */
  foreignReason(record: Rec, target: Target): RejectReason | null;
}

/**
 * Streams its windows itself (aggregates: pages of groups, halved at the page cap; NFT holdings:
 * next_page_params).
 */
export interface StreamedCollection<Target, Rec> {
  readonly kind: 'streamed';
  streamWindow(client: InsightClient, target: Target, req: WindowRequest): AsyncIterable<RecordPage<Rec> | ChainDone>;
}

export type Collection<Target, Rec> = PagedCollection<Target, Rec> | StreamedCollection<Target, Rec>;

/**
 * A list dataset (cryo's model): one module declares what the dataset is — its capabilities,
 * table, columns, sort, how a window is collected and how a record becomes a row.
 */
export interface ListDataset<Target, Rec, Name extends string = string> {
  readonly name: Name;
  readonly capabilities: DatasetCapabilities;
  /** Table (top-level folder) the rows of this target go to; one schema per table. */
  tableName(target: Target): string;
  columns(target: Target): Column[];
  /** Order of rows inside a file: the order the paginator streams them in. */
  readonly sortKey: readonly string[];
  /** Short stable name of the target used in file names and state keys. */
  targetKey(target: Target): string;
  readonly collection: Collection<Target, Rec>;
  position(record: Rec): RecordPosition;
  chainId(record: Rec): number;
  itemId(record: Rec, target: Target): string;
  /**
   * What tells a record from the others of its chain and target: item_id without what they share.
   * A window keeps one for every row it has written until it commits (it never writes an item_id
   * twice), so the smaller the better: a string of the record itself costs no concatenation.
   * Without it, the window keeps item_id.
   */
  rowKey?(record: Rec): string;
  /** The dataset's row: the RowOf its column declaration (`as const`), so every column is checked. */
  toRow(record: Rec, target: Target): Row;
  /** `YYYY-MM-DD` of a row for `{date}` partitions; without it, the date of the row's block_timestamp. */
  partitionDate?(row: Row): string;
}

/**
 * A dataset as the registry lists it: what a window export needs (ListDataset), and how the dataset
 * builds its own target from the planner's unit target of a kind it takes.
 */
export interface Dataset<Target, Rec, Name extends string = string, Kind extends TargetKind = TargetKind> extends ListDataset<
  Target,
  Rec,
  Name
> {
  readonly capabilities: DatasetCapabilities<Kind>;
  /** The dataset's target of a unit target (built once per target and filters; the run keeps it). */
  buildTarget(unit: StreamTargetOf<Kind>, options: TargetOptions): Target | Promise<Target>;
  /** Checks the job's options for the unit target before the run sends a request; throws a UserInputError. */
  checkOptions?(unit: StreamTargetOf<Kind>, options: TargetOptions): void;
  /**
   * The table (name and columns) of a unit target without building its target, for a dataset whose
   * target holds a decoder (viem, the decode modules): equal to tableName and columns of the built
   * target. Without it, the table is read from the built target.
   */
  tableOf?(unit: StreamTargetOf<Kind>, options: TargetOptions): TableShape | Promise<TableShape>;
}

/** A table as the job's checks see it: its name and columns. */
export interface TableShape {
  readonly name: string;
  readonly columns: Column[];
}

/** `a` and `b` name the same address or hash (the service may send either case). */
export function sameHex(a: string | null | undefined, b: string): boolean {
  return a === b || (typeof a === 'string' && a.toLowerCase() === b.toLowerCase());
}

/** Columns every row of every list dataset starts with (the column conventions of docs/datasets.md). */
const [CHAIN_ID, BLOCK_NUMBER, BLOCK_HASH, BLOCK_TIMESTAMP] = BLOCK_FIELDS;
export const BLOCK_COLUMNS = [
  column('item_id', 'string', 'Stable unique key of the row', false),
  CHAIN_ID,
  BLOCK_NUMBER,
  BLOCK_TIMESTAMP,
  column('block_time', 'timestamp', 'Block time, UTC timestamp', false),
  BLOCK_HASH,
] as const;

/** Window bounds of the list operations: block_number or block_timestamp, half-open. */
export const BLOCK_WINDOW_FILTERS: Record<Axis, { gte: string; lt: string }> = {
  block: { gte: 'filter_block_number_gte', lt: 'filter_block_number_lt' },
  time: { gte: 'filter_block_timestamp_gte', lt: 'filter_block_timestamp_lt' },
};

/**
 * Slice axes of a block-based dataset: the window's axis (block_timestamp for time windows), then
 * block_number, then the row's position in its block (`inner`), where one value holds at most two
 * rows (a wallet's self-transfer comes back once as sender and once as receiver).
 */
export function blockSliceAxes<Rec extends RecordPosition>(axis: Axis, inner: SliceAxis<Rec>): SliceAxis<Rec>[] {
  const block: SliceAxis<Rec> = { field: 'block_number', value: (r) => r.block_number };
  return axis === 'time' ? [{ field: 'block_timestamp', value: (r) => r.block_timestamp }, block, inner] : [block, inner];
}

/**
 * The list query of one slice: always page 0 (paging never trusts OFFSET), sorted by block
 * number so that a well-behaved service sends rows in the order they are written.
 */
export function pageQuery(req: PageRequest, decode: boolean): ListQuery {
  return {
    chainIds: req.chainIds,
    filters: req.filters,
    sortBy: 'block_number',
    sortOrder: 'asc',
    decode,
    limit: req.limit,
    page: 0,
  };
}

let lastTimestamp = Number.NaN;
let lastBlockTime = '';

/** isoTime of a block timestamp; rows come sorted by block, so the previous row's is usually the answer. */
export function blockTime(unixSeconds: number): string {
  if (unixSeconds !== lastTimestamp) {
    lastBlockTime = isoTime(unixSeconds);
    lastTimestamp = unixSeconds;
  }
  return lastBlockTime;
}
