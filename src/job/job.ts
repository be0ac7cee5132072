/**
 * A job as the loader gives it: the job file normalised (defaults filled, names resolved, filters
 * merged), with the constants its defaults and limits come from. Field names are the file's
 * (snake_case); fields the loader derives are camelCase (`jobFile`, `isName`, `topic0`).
 */
import { DATASET_NAMES, type DatasetName } from '../datasets/index.js';
import type { JobFileSettings, OrNull } from '../settings/file-sections.js';
import type { EventSignature } from '../settings/values.js';
import type { Hex } from '../source/records.js';
import type { FileProblem } from '../yaml-file/problems.js';

export const NFT_TYPES = ['ERC-721', 'ERC-1155', 'ERC-404'] as const;
export type NftType = (typeof NFT_TYPES)[number];

/** Largest chain id allowed by EIP-2294: floor(MAX_UINT64 / 2) - 36. */
export const MAX_CHAIN_ID = 4_503_599_627_370_476;
export const DEFAULT_BLOCK_CHUNK = 10_000;
export const DEFAULT_TIME_CHUNK = 86_400;
export const DEFAULT_BLOCK_SAFETY_LAG = 64;
export const DEFAULT_TIME_SAFETY_LAG = 900;

/** What a range and its windows count, declared once with the datasets. */
import type { Axis } from '../datasets/dataset.js';
export type { Axis };

export interface JobRange {
  /** What `from`/`to`/`chunk`/`safety_lag` count: block numbers or unix seconds of block_timestamp. */
  by: Axis;
  /** Inclusive start. */
  from: number;
  /** Exclusive end, or "latest" = chain head minus safety_lag (resolved by the planner). */
  to: number | 'latest';
  /** Blocks (by: block) or seconds (by: time) kept back from the head when to = latest. */
  safety_lag: number;
  /** Window size in blocks or seconds; windows are aligned to multiples of it (time: from UTC midnight). */
  chunk: number;
  /** Blocks below the newest exported block within which each run repairs reorganisations: one number, or per chain id (src/state/reorg-check.ts has the defaults). */
  reorg_horizon?: number | Record<string, number>;
}

interface TargetBase {
  /** Position in the file's `targets` list. */
  index: number;
  datasets: DatasetName[];
  /** The job's chains, or the target's own subset. */
  chains: number[];
  /** Job-level filters merged with the target's own; values as sent. */
  filters: Record<string, string>;
}

export interface WalletTarget extends TargetBase {
  kind: 'wallet';
  /** Lowercase address, or an ENS-normalised name. */
  wallet: string;
  isName: boolean;
  nft_types: NftType[];
  tables?: TableNames;
}

/** Table names the job file chooses, by dataset (the dataset's own name where none is given). */
export type TableNames = Partial<Record<DatasetName, string>>;

/** An event of a contract target, with the tables its datasets write to when the file names them. */
export interface JobEvent extends EventSignature {
  tables?: TableNames;
}

export interface ContractTarget extends TargetBase {
  kind: 'contract';
  contract: Hex;
  events: JobEvent[];
  /** Absolute path of the ABI file, or null. */
  abi: string | null;
}

/** What the job exports of its chains themselves (block headers): no wallet or contract. */
export interface ChainTarget extends TargetBase {
  kind: 'chain';
  tables?: TableNames;
}

export type Target = WalletTarget | ContractTarget | ChainTarget;

export interface Job {
  name: string;
  description: string | null;
  /** The file the job was read from, as given to the loader. */
  jobFile: string;
  source: OrNull<JobFileSettings['source']> & { chains: number[] };
  targets: Target[];
  aggregates: { group_by: string[]; aggregate: string[] } | null;
  /** Null only when every dataset is a snapshot (no range). */
  range: JobRange | null;
  /** Job-level filters as written (already merged into each target's `filters`). */
  filters: Record<string, string>;
  decode: boolean;
  /** Only what the file sets; the effective values are in ResolvedConfig. */
  output: JobFileSettings['output'];
  concurrency: JobFileSettings['concurrency'];
  retries: JobFileSettings['retries'];
  /** Things that are allowed but probably not meant (located like errors). */
  warnings: FileProblem[];
}

export function jobDatasets(job: Pick<Job, 'targets'>): DatasetName[] {
  return DATASET_NAMES.filter((d) => job.targets.some((t) => t.datasets.includes(d)));
}
