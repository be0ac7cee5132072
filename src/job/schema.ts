/**
 * The job file, defined once with zod: the TypeScript types (`JobFileInput` as written,
 * `Job` normalised) and the published JSON Schema (schema/job.schema.json, `npm run schema`)
 * both come from here. Every field is documented with `.describe()`.
 *
 * Field names in `Job` are the file's (snake_case); fields the loader derives are camelCase
 * (`jobFile`, `isName`, `topic0`).
 */
import path from 'node:path';
import { z } from 'zod';
import type { Hex } from '../source/records.js';
import type { FileProblem } from '../yaml-file/problems.js';
import { filterRoute, filtersOf, parseFilterValue, RANGE_FILTERS } from './filters.js';
import {
  capabilitiesOf,
  DATASET_NAMES,
  datasetsFor,
  datasetsWhere,
  defaultDatasets,
  isSnapshot,
  type DatasetName,
  type TargetKind,
} from '../datasets/index.js';
import { didYouMean, type ProblemParams } from '../yaml-file/issues.js';
import { partitioningUses } from '../sink/partitioning.js';
import { settingsSections } from './settings.js';
import { checked, SETTINGS } from '../settings/settings.js';
import { jobFileSettings, orNull, type JobFileSettings, type OrNull } from '../settings/file-sections.js';
import { compressionAllowed, compressionsList } from '../sink/formats.js';
import {
  ADDRESS_PATTERN,
  DURATION_PATTERN,
  formatDuration,
  isDateLike,
  parseAddress,
  parseAddressOrName,
  parseDurationSeconds,
  parseJobEventSignature,
  parseTimePoint,
  type EventSignature,
} from '../settings/values.js';

// ---------------------------------------------------------------- constants and types

export const NFT_TYPES = ['ERC-721', 'ERC-1155', 'ERC-404'] as const;
export type NftType = (typeof NFT_TYPES)[number];

/** Largest chain id allowed by EIP-2294: floor(MAX_UINT64 / 2) - 36. */
export const MAX_CHAIN_ID = 4_503_599_627_370_476;
export const DEFAULT_BLOCK_CHUNK = 10_000;
export const DEFAULT_TIME_CHUNK = 86_400;
export const DEFAULT_BLOCK_SAFETY_LAG = 64;
export const DEFAULT_TIME_SAFETY_LAG = 900;
const DAY = 86_400;
/** Integers from here on, written without `by:`, look like unix times rather than block numbers. */
const LOOKS_LIKE_UNIX_TIME = 1_000_000_000;

export type Axis = 'block' | 'time';

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

// ---------------------------------------------------------------- leaf schemas

const chainIdSchema = z.number().int().min(1).max(MAX_CHAIN_ID).describe('An EVM chain id (1 = Ethereum, 8453 = Base, ...).');

const chainsSchema = z.array(chainIdSchema).min(1).describe('Chain ids, one or more (sent in batches of at most 55 per request).');

const addressSchema = checked(
  z.string().regex(new RegExp(ADDRESS_PATTERN), { error: 'is not an address (0x + 40 hex digits)' }),
  parseAddress,
);

const eventSchema = checked(z.string(), parseJobEventSignature).describe(
  'Human-readable event signature with canonical types and `indexed` markers, e.g. "Transfer(address indexed from, address indexed to, uint256 value)". Not a topic hash: topic0 is computed from it.',
);

/** A table name: a folder at the destination and a warehouse identifier, so lowercase, no quoting needed. */
export const TABLE_NAME_PATTERN = '^[a-z][a-z0-9_]*$';
export const TABLE_NAME_MAX = 63;

const tableNameSchema = z
  .string()
  .regex(new RegExp(TABLE_NAME_PATTERN), { error: 'is not a table name (lowercase letters, digits and "_", starting with a letter)' })
  .max(TABLE_NAME_MAX);

/** `tables:` of a wallet or chain target or of a contract's event: a stable name per dataset. */
function tablesSchema(kind: TargetKind) {
  return z
    .partialRecord(z.enum(datasetsFor(kind)), tableNameSchema)
    .describe(
      'Table names by dataset, e.g. {events: transfers, aggregates: transfers_daily}: the folder the rows go to and the warehouse table. Without a name a dataset gets its default table (which for events and aggregates changes with their columns). A name keeps the columns it was first written with: a run that would change them is refused (an Iceberg table may gain columns, or an int32 column become int64); and, for each window of a target, the query it was first exported with: a run that would put the rows of a changed query beside the old ones is refused.',
    );
}

const contractEventSchema = z.union([
  eventSchema,
  z
    .strictObject({ signature: eventSchema, tables: tablesSchema('contract').optional() })
    .describe('An event signature and the tables of its rows.'),
]);

const filterValueSchema = z
  .union([z.string(), z.number()])
  .describe('Filter value: big integers (wei) as decimal strings, hashes as 0x hex; for filter_topic_N an address is left-padded.');

const filtersSchema = z
  .record(z.string(), filterValueSchema)
  .describe(
    'Extra `filter_*` parameters of the read interface, e.g. {filter_value_gte: "1000000000000000000"}. Checked against the datasets used. Block number and timestamp filters come from `range`.',
  );

const rangePointSchema = z.union([
  z.number().int().min(0).describe('A block number, or unix seconds with `by: time`.'),
  z.string().describe('A UTC date "2024-01-01" or date-time "2024-01-01T00:00:00Z" (implies `by: time`).'),
]);

/** The datasets a target kind may list, its default marked (from the registry). */
function datasetsDoc(kind: TargetKind): string {
  const dflt = defaultDatasets(kind);
  return `What to export for the ${kind}: ${datasetsFor(kind)
    .map((d) => (dflt.includes(d) ? `${d} (default)` : d))
    .join(', ')}.`;
}

const walletTargetSchema = z
  .strictObject({
    wallet: checked(z.string(), parseAddressOrName).describe('Wallet address (0x + 40 hex) or a name like "alice.eth".'),
    datasets: z
      .array(z.enum(datasetsFor('wallet')))
      .min(1)
      .optional()
      .describe(datasetsDoc('wallet')),
    chains: chainsSchema.optional().describe("Only these of the job's chains for this target (default: all)."),
    filters: filtersSchema.optional(),
    nft_types: z
      .array(z.enum(NFT_TYPES))
      .min(1)
      .optional()
      .describe(`Token standards for the ${datasetsWhere((c) => c.targetOption === 'nft_types').join(', ')} dataset. Default: all three.`),
    tables: tablesSchema('wallet').optional(),
  })
  .describe('A wallet (sent or received transactions) and the datasets to export for it.');

const contractTargetSchema = z
  .strictObject({
    contract: addressSchema.describe('Contract address (0x + 40 hex) whose events to export.'),
    events: z
      .array(contractEventSchema)
      .min(1)
      .describe('Event signatures to export (a signature, or {signature, tables}); one work unit per signature.'),
    datasets: z
      .array(z.enum(datasetsFor('contract')))
      .min(1)
      .optional()
      .describe(datasetsDoc('contract')),
    abi: z.string().min(1).optional().describe('JSON ABI file for local decoding, relative to the job file.'),
    chains: chainsSchema
      .optional()
      .describe("Only these of the job's chains for this target (default: all). Contract addresses often differ per chain."),
    filters: filtersSchema.optional(),
  })
  .describe('A contract and the event signatures to export from it.');

const chainTargetSchema = z
  .strictObject({
    datasets: z
      .array(z.enum(datasetsFor('chain')))
      .min(1)
      .describe(datasetsDoc('chain')),
    chains: chainsSchema.optional().describe("Only these of the job's chains for this target (default: all)."),
    tables: tablesSchema('chain').optional(),
  })
  .describe('The chains themselves (no wallet or contract): the datasets to export of each chain, e.g. its blocks.');

const rangeSchema = z
  .strictObject({
    by: z
      .enum(['block', 'time'])
      .optional()
      .describe(
        'What the range counts. Without it: integers are block numbers and dates/times are time; an integer that looks like a unix time (>= 1e9) is refused as ambiguous. With `by: time`, integers are unix seconds.',
      ),
    from: rangePointSchema.describe(SETTINGS['range.from'].doc),
    to: z.union([rangePointSchema, z.literal('latest')]).describe(SETTINGS['range.to'].doc),
    safety_lag: z
      .union([z.number().int().min(0), z.string().regex(new RegExp(DURATION_PATTERN), { error: 'is not a duration (e.g. "10m")' })])
      .optional()
      .describe(
        `Only with to: latest. Blocks (by: block, default ${DEFAULT_BLOCK_SAFETY_LAG}) or a duration (by: time, default "${formatDuration(DEFAULT_TIME_SAFETY_LAG)}") kept back from the head, against chain reorganisations.`,
      ),
    chunk: z
      .union([z.number().int().min(1), z.string().regex(new RegExp(DURATION_PATTERN), { error: 'is not a duration (e.g. "1d", "6h")' })])
      .optional()
      .describe(
        `Window size: blocks (by: block, default ${DEFAULT_BLOCK_CHUNK}) or a duration (by: time, default "1d"; must divide a day or be whole days). Windows are aligned to multiples of it so re-runs reuse the same windows.`,
      ),
    reorg_horizon: z
      .union([z.number().int().min(0), z.record(z.string().regex(/^\d+$/, { error: 'is not a chain id' }), z.number().int().min(0))])
      .optional()
      .describe(
        'Blocks below the newest exported block within which every run checks the recorded block hashes of the windows and exports again those a reorganisation replaced; a deeper reorganisation fails the run and names the range. One number for every chain, or per chain id ({"1": 128}); defaults per chain: see docs/operations.md (Reorganisations).',
      ),
  })
  .describe('Half-open range [from, to) over block numbers or block timestamps, cut into aligned windows.');

// ---------------------------------------------------------------- the file

export interface JobSchemaContext {
  /** Directory relative local destinations are taken from (the run's working directory); `{job_dir}/...` is taken from jobDir. */
  cwd: string;
  /** Directory of the job file (ABI paths are relative to it, and `{job_dir}` in the destination names it). */
  jobDir: string;
  jobFile: string;
  /** Locates warnings (defaults to 1:1). */
  locate?: (path: (string | number)[]) => { line: number; column: number };
}

function fileShape(ctx: JobSchemaContext) {
  const settings = settingsSections(ctx.cwd, ctx.jobDir);
  return z
    .strictObject({
      $schema: z.string().optional().describe('JSON Schema reference for editors; ignored.'),
      name: z
        .string()
        .regex(/^[a-z0-9][a-z0-9_-]*$/, {
          error: 'is not a job name (lowercase letters, digits, "_" and "-", starting with a letter or digit)',
        })
        .max(100)
        .describe('Job name: [a-z0-9][a-z0-9_-]*; names the state of the job at the destination.'),
      description: z.string().optional().describe('Free text.'),
      source: z
        .strictObject({ ...settings.source, chains: chainsSchema })
        .describe('Where the data comes from. Keys and secrets are never written here: they come from the environment.'),
      targets: z
        .array(z.union([walletTargetSchema, contractTargetSchema, chainTargetSchema]))
        .min(1)
        .describe('Wallets, contracts and chain targets to export. Each target x dataset x chain x window is one work unit.'),
      aggregates: z
        .strictObject({
          group_by: z
            .array(z.string().trim().min(1))
            .optional()
            .describe('Group columns or expressions, e.g. [chain_id, "toDate(block_timestamp) as day"].'),
          aggregate: z
            .array(z.string().trim().min(1))
            .optional()
            .describe('Aggregate expressions, e.g. ["count() as tx_count", "sum(gas_used) as gas"].'),
        })
        .optional()
        .describe(
          `For the ${datasetsWhere((c) => c.readsJobAggregates === true).join(', ')} dataset: rows are computed per window, so group by a bucket no larger than range.chunk.`,
        ),
      range: rangeSchema.optional(),
      filters: filtersSchema.optional(),
      decode: z.boolean().optional().describe('Ask the service to decode transactions/events (default true).'),
      output: settings.output.optional(),
      concurrency: settings.concurrency.optional(),
      retries: settings.retries.optional(),
    })
    .describe('An insight-export job: what to export from the read interface, over which range, to where.');
}

type FileValue = z.output<ReturnType<typeof fileShape>>;
type Ctx = z.core.$RefinementCtx<FileValue>;

function issue(ctx: Ctx, path: (string | number)[], message: string, params: ProblemParams = {}, input?: unknown) {
  ctx.issues.push({ code: 'custom', message, path, input, params: params as Record<string, unknown> });
}

type FileRange = NonNullable<FileValue['range']>;
const rangeAt = (k: string) => ['range', k];

/** Applies the axis rule and fills defaults; issues go to `ctx`. */
function normaliseRange(range: FileRange, ctx: Ctx): JobRange | null {
  const r = exactNumbers(range, ctx);
  if (!r) return null;
  const by = rangeAxis(r, ctx);
  if (!by) return null;
  let ok = true;
  const from = rangePoint(r, 'from', by, ctx);
  const to = rangePoint(r, 'to', by, ctx);
  if (from === null || to === null || from === 'latest') return null;
  if (typeof to === 'number' && from >= to) {
    issue(ctx, rangeAt('to'), `is not after range.from (${r.from}): the range [from, to) would be empty`, {
      hint: '"to" is exclusive: to export one day write from: "2024-01-01", to: "2024-01-02"',
    });
    ok = false;
  }
  const chunk = rangeAmount(r, 'chunk', by === 'block' ? DEFAULT_BLOCK_CHUNK : DEFAULT_TIME_CHUNK, by, ctx);
  const lag = rangeAmount(r, 'safety_lag', by === 'block' ? DEFAULT_BLOCK_SAFETY_LAG : DEFAULT_TIME_SAFETY_LAG, by, ctx);
  if (chunk !== null && chunk <= 0) {
    issue(ctx, rangeAt('chunk'), 'must be greater than 0');
    ok = false;
  }
  if (chunk !== null && chunk > 0 && by === 'time' && DAY % chunk !== 0 && chunk % DAY !== 0) {
    issue(ctx, rangeAt('chunk'), 'does not divide a day and is not a whole number of days', {
      hint: 'time windows are aligned to UTC midnight: use e.g. "1h", "6h", "12h", "1d", "7d"',
    });
    ok = false;
  }
  if (r.safety_lag !== undefined && to !== 'latest') {
    issue(ctx, rangeAt('safety_lag'), 'only applies with to: latest', { noValue: false, hint: 'remove it, or set to: latest' });
    ok = false;
  }
  if (!ok || chunk === null || lag === null) return null;
  return { by, from, to, safety_lag: lag, chunk, ...(r.reorg_horizon === undefined ? {} : { reorg_horizon: r.reorg_horizon }) };
}

/** A quoted whole number is still a number; one beyond 2^53 arrives as digits (never rounded) and is refused. */
function exactNumbers(range: FileRange, ctx: Ctx): FileRange | null {
  let r = range;
  for (const k of ['from', 'to'] as const) {
    const v = r[k];
    if (typeof v === 'string' && /^\d+$/.test(v.trim())) {
      const n = Number(v.trim());
      if (!Number.isSafeInteger(n)) {
        issue(ctx, rangeAt(k), 'is too large to be exact (above 2^53)', { noValue: false });
        return null;
      }
      r = { ...r, [k]: n };
    }
  }
  return r;
}

const kindOf = (v: unknown): 'block' | 'time' | 'latest' => (v === 'latest' ? 'latest' : typeof v === 'string' ? 'time' : 'block');

/** range.by, or what from and to imply: dates count time, numbers blocks (not both, and no unix time taken for a block). */
function rangeAxis(r: FileRange, ctx: Ctx): Axis | null {
  if (r.by) return r.by;
  const kinds = [kindOf(r.from), kindOf(r.to)].filter((k) => k !== 'latest');
  if (kinds.includes('time') && kinds.includes('block')) {
    const which = kindOf(r.from) === 'block' ? 'from' : 'to';
    issue(ctx, rangeAt(which), `is a block number but range.${which === 'from' ? 'to' : 'from'} is a date`, {
      hint: 'use dates on both ends, or set "by: time" and give unix seconds',
    });
    return null;
  }
  const by = kinds.includes('time') ? 'time' : 'block';
  for (const k of ['from', 'to'] as const) {
    const v = r[k];
    if (by === 'block' && typeof v === 'number' && v >= LOOKS_LIKE_UNIX_TIME) {
      issue(ctx, rangeAt(k), 'looks like a unix time, not a block number', {
        hint: 'add "by: time" if it is unix seconds, or "by: block" if it really is a block number',
      });
      return null;
    }
  }
  return by;
}

/** range.from or range.to on the axis: a block number, unix seconds, or "latest" (to only). */
function rangePoint(r: FileRange, k: 'from' | 'to', by: Axis, ctx: Ctx): number | 'latest' | null {
  const v = r[k];
  if (v === 'latest') {
    if (k === 'from') {
      issue(ctx, rangeAt(k), 'cannot be "latest"', { hint: 'from is where the export starts; to: latest follows the chain head' });
      return null;
    }
    return 'latest';
  }
  if (by === 'block') {
    if (typeof v === 'string') {
      issue(ctx, rangeAt(k), isDateLike(v) ? 'is a date but range.by is block' : 'is not a block number', {
        hint: isDateLike(v) ? 'remove "by: block" (or set "by: time") to use dates' : 'write a block number, a UTC date, or "latest"',
      });
      return null;
    }
    return v;
  }
  const t = parseTimePoint(v);
  if (!t.ok) {
    issue(ctx, rangeAt(k), t.problem, { hint: t.hint });
    return null;
  }
  return t.value;
}

/** range.chunk or range.safety_lag on the axis: blocks, or a duration in seconds; `dflt` when absent. */
function rangeAmount(r: FileRange, k: 'chunk' | 'safety_lag', dflt: number, by: Axis, ctx: Ctx): number | null {
  const v = r[k];
  if (v === undefined) return dflt;
  if (by === 'block') {
    if (typeof v === 'string') {
      issue(ctx, rangeAt(k), 'is a duration but the range counts blocks', {
        hint: `write a number of blocks (e.g. ${dflt}), or count time with dates / "by: time"`,
      });
      return null;
    }
    return v;
  }
  if (typeof v === 'number') {
    issue(ctx, rangeAt(k), 'is a number but the range counts time', {
      hint: `write a duration with its unit, e.g. "${formatDuration(dflt)}"`,
    });
    return null;
  }
  const d = parseDurationSeconds(v);
  if (!d.ok) {
    issue(ctx, rangeAt(k), d.problem, { hint: d.hint });
    return null;
  }
  return d.value;
}

const ROUTE_NAMES = { wallet: 'wallet transactions', contract: 'contract events' } as const;

function checkChains(chains: number[], ctx: Ctx, at: (string | number)[]) {
  const seen = new Set<number>();
  chains.forEach((c, i) => {
    if (seen.has(c)) issue(ctx, [...at, i], 'is listed twice');
    seen.add(c);
  });
}

export function jobFileSchema(sctx: JobSchemaContext) {
  return fileShape(sctx).transform((f, ctx): Job => {
    const warnings: FileProblem[] = [];
    checkChains(f.source.chains, ctx, ['source', 'chains']);
    const jobFilters = f.filters ?? {};
    const seen: SeenTargets = { keys: new Map(), reportedJobFilters: new Set() };
    const targets = f.targets.map((t, index) => normaliseTarget({ f, ctx, sctx, seen, warnings }, t, index));

    const all = new Set<DatasetName>(targets.flatMap((t) => t.datasets));
    const range = checkRange(f, all, ctx);
    checkAggregatesSection(f, all, ctx);
    const settings = jobFileSettings(f);
    checkOutput(settings.output, all, ctx);

    return {
      name: f.name,
      description: f.description ?? null,
      jobFile: sctx.jobFile,
      source: { ...orNull('source', settings.source), chains: f.source.chains },
      targets,
      aggregates: f.aggregates ? { group_by: f.aggregates.group_by ?? [], aggregate: f.aggregates.aggregate ?? [] } : null,
      range,
      filters: Object.fromEntries(Object.entries(jobFilters).map(([k, v]) => [k, String(v)])),
      decode: f.decode ?? true,
      output: settings.output,
      concurrency: settings.concurrency,
      retries: settings.retries,
      warnings,
    };
  });
}

type FileTarget = FileValue['targets'][number];
type FileWalletTarget = Extract<FileTarget, { wallet: unknown }>;
type FileContractTarget = Extract<FileTarget, { contract: unknown }>;
type FileChainTarget = Exclude<FileTarget, FileWalletTarget | FileContractTarget>;

/** What the targets' checks share across targets: each target's key (to refuse a second one), job filters already reported. */
interface SeenTargets {
  keys: Map<string, number>;
  reportedJobFilters: Set<string>;
}

interface TargetCheck {
  f: FileValue;
  ctx: Ctx;
  sctx: JobSchemaContext;
  seen: SeenTargets;
  warnings: FileProblem[];
}

/** One target of the file: its chains, datasets and filters checked, defaults filled. */
function normaliseTarget(c: TargetCheck, t: FileTarget, index: number): Target {
  const at = (...p: (string | number)[]) => ['targets', index, ...p];
  const chains = t.chains ?? c.f.source.chains;
  if (t.chains) {
    checkChains(t.chains, c.ctx, at('chains'));
    t.chains.forEach((chain, i) => {
      if (!c.f.source.chains.includes(chain))
        issue(c.ctx, at('chains', i), "is not one of the job's chains (source.chains)", { hint: 'add it to source.chains' });
    });
  }
  const kind: TargetKind = 'wallet' in t ? 'wallet' : 'contract' in t ? 'contract' : 'chain';
  const datasets: DatasetName[] = [...new Set<DatasetName>(t.datasets ?? defaultDatasets(kind))];
  // Filters: the job's (for every list dataset of the target) plus the target's own.
  const filters: Record<string, string> = {};
  const check = (given: Record<string, string | number>, where: (string | number)[], own: boolean) =>
    checkFilters(c, { given, where, own, datasets, kind, index, into: filters });
  check(c.f.filters ?? {}, ['filters'], false);
  if ('filters' in t && t.filters) check(t.filters, at('filters'), true);
  const base = { datasets, chains, filters };
  return 'wallet' in t
    ? walletTarget(c, t, index, base)
    : 'contract' in t
      ? contractTarget(c, t, index, base)
      : chainTarget(c, t, index, base);
}

interface FilterCheck {
  given: Record<string, string | number>;
  where: (string | number)[];
  /** The target's own filters (not the job's, which are checked once per target and reported once). */
  own: boolean;
  datasets: DatasetName[];
  kind: TargetKind;
  index: number;
  into: Record<string, string>;
}

/** Filters checked against the routes of the target's list datasets; valid ones go `into` the target's. */
function checkFilters(c: TargetCheck, x: FilterCheck): void {
  const { ctx } = c;
  const reported = c.seen.reportedJobFilters;
  const routes = [...new Set(x.datasets.map((d) => filterRoute(d, x.kind)).filter((r) => r !== null))];
  if (x.own && routes.length === 0) {
    issue(ctx, x.where, `do not apply: ${x.datasets.join(', ')} take no filters`, { noValue: true });
    return;
  }
  for (const [name, raw] of Object.entries(x.given)) {
    const p = [...x.where, name];
    if (RANGE_FILTERS.has(name)) {
      issue(ctx, p, `is set by the planner from range`, {
        noValue: true,
        atKey: true,
        hint: 'use range.from / range.to (block numbers or dates) instead',
      });
      continue;
    }
    for (const route of routes) {
      const known = filtersOf(route);
      const kind = known.get(name);
      if (!kind && !x.own && reported.has(name)) continue;
      if (!kind) {
        if (!x.own) reported.add(name);
        const close = didYouMean(name, known.keys()) ?? [...known.keys()].find((k) => k === `filter_${name}`);
        const other = route === 'wallet' ? 'contract' : 'wallet';
        const elsewhere = filtersOf(other).has(name);
        issue(ctx, p, `"${name}" is not a filter of the ${ROUTE_NAMES[route]} route${x.own ? '' : ` (used by targets[${x.index}])`}`, {
          noValue: true,
          atKey: true,
          hint: close
            ? `did you mean "${close}"?`
            : elsewhere && !x.own
              ? `it filters ${ROUTE_NAMES[other]} only: move it under the \`filters:\` of those targets`
              : `known: ${[...known.keys()].filter((k) => !k.match(/_(gt|lt|lte)$/)).join(', ')} (and _gt/_lte/_lt forms)`,
        });
        continue;
      }
      const v = parseFilterValue(kind, raw);
      if (!v.ok && !x.own && reported.has(name)) continue;
      if (!v.ok && !x.own) reported.add(name);
      if (!v.ok) issue(ctx, p, v.problem, { hint: v.hint }, raw);
      else x.into[name] = v.value;
    }
  }
}

interface TargetParts {
  datasets: DatasetName[];
  chains: number[];
  filters: Record<string, string>;
}

/** A second target for the same wallet or contract is refused: its datasets or events belong in the first. */
function refuseSecond(c: TargetCheck, key: string, index: number, path: (string | number)[], hint: string): void {
  if (c.seen.keys.has(key)) issue(c.ctx, path, `is already targets[${c.seen.keys.get(key)}]`, { hint });
  c.seen.keys.set(key, index);
}

function walletTarget(c: TargetCheck, t: FileWalletTarget, index: number, base: TargetParts): Target {
  refuseSecond(c, `wallet:${t.wallet.value}`, index, ['targets', index, 'wallet'], 'list its datasets in one target');
  const readers = datasetsWhere((d) => d.targetOption === 'nft_types');
  if (t.nft_types && !base.datasets.some((d) => readers.includes(d))) {
    issue(c.ctx, ['targets', index, 'nft_types'], `only applies to the ${readers.join(', ')} dataset`, { noValue: true, atKey: true });
  }
  checkTableKeys(c, t.tables, base.datasets, ['targets', index, 'tables']);
  return {
    kind: 'wallet',
    index,
    wallet: t.wallet.value,
    isName: t.wallet.isName,
    ...base,
    nft_types: t.nft_types ?? [...NFT_TYPES],
    ...(t.tables ? { tables: t.tables } : {}),
  };
}

function contractTarget(c: TargetCheck, t: FileContractTarget, index: number, base: TargetParts): Target {
  const at = (...p: (string | number)[]) => ['targets', index, ...p];
  refuseSecond(c, `contract:${t.contract}`, index, at('contract'), 'list all its events in one target');
  const topics = new Map<string, number>();
  const events: JobEvent[] = t.events.map((entry, i) => {
    if ('topic0' in entry) return entry;
    checkTableKeys(c, entry.tables, base.datasets, at('events', i, 'tables'));
    return entry.tables ? { ...entry.signature, tables: entry.tables } : entry.signature;
  });
  events.forEach((e, i) => {
    if (topics.has(e.topic0)) {
      issue(c.ctx, at('events', i), `has the same topic0 as events[${topics.get(e.topic0)}] (${e.canonical})`);
    }
    topics.set(e.topic0, i);
    if (e.abi.inputs.length > 0 && !e.hasIndexedMarkers) {
      const pos = c.sctx.locate?.(at('events', i)) ?? { line: 1, column: 1 };
      c.warnings.push({
        file: c.sctx.jobFile,
        ...pos,
        field: `targets[${index}].events[${i}]`,
        message: `"${e.signature}" marks no parameter as indexed`,
        hint: 'decoding is positional: if the event has indexed parameters, mark them with "indexed" or decoding fails',
      });
    }
  });
  return {
    kind: 'contract',
    index,
    contract: t.contract,
    events,
    abi: t.abi ? path.resolve(c.sctx.jobDir, t.abi) : null,
    ...base,
  };
}

/** One chain target per job: its chains and datasets belong in the first. */
function chainTarget(c: TargetCheck, t: FileChainTarget, index: number, base: TargetParts): Target {
  const first = c.seen.keys.get('chain');
  if (first !== undefined) {
    issue(c.ctx, ['targets', index], `is a second chain target: targets[${first}] is one`, {
      noValue: true,
      hint: 'list its chains and datasets in one chain target',
    });
  }
  c.seen.keys.set('chain', first ?? index);
  checkTableKeys(c, t.tables, base.datasets, ['targets', index, 'tables']);
  return { kind: 'chain', index, ...base, ...(t.tables ? { tables: t.tables } : {}) };
}

/** A table is named for a dataset the target exports. */
function checkTableKeys(c: TargetCheck, tables: TableNames | undefined, datasets: DatasetName[], at: (string | number)[]): void {
  for (const dataset of Object.keys(tables ?? {}) as DatasetName[]) {
    if (!datasets.includes(dataset))
      issue(c.ctx, [...at, dataset], `names a table for ${dataset}, which this target does not export`, {
        noValue: true,
        atKey: true,
        hint: `its datasets: ${datasets.join(', ')}`,
      });
  }
}

/** The range, required when a dataset of the job is not a snapshot, on an axis every ranged dataset of the job takes. */
function checkRange(f: FileValue, all: Set<DatasetName>, ctx: Ctx): JobRange | null {
  let range: JobRange | null = null;
  if (f.range) {
    range = normaliseRange(f.range, ctx);
    const by = range?.by;
    const refusing = [...all].filter((d) => by && !isSnapshot(d) && !capabilitiesOf(d).rangeAxes.includes(by));
    if (by && refusing.length > 0) {
      issue(
        ctx,
        ['range'],
        `counts ${by === 'block' ? 'blocks' : 'time'} but ${refusing.join(', ')} take${refusing.length === 1 ? 's' : ''} ${by === 'block' ? 'time' : 'block'} ranges only`,
        {
          noValue: true,
          hint: by === 'time' ? 'give range.from and range.to as block numbers' : 'give range.from and range.to as dates',
        },
      );
    }
  } else if ([...all].some((d) => !isSnapshot(d))) {
    issue(ctx, ['range'], `is required: the job exports ${[...all].filter((d) => !isSnapshot(d)).join(', ')}`, {
      noValue: true,
      hint: 'add e.g. range: {from: 19000000, to: latest} or range: {from: "2024-01-01", to: "2024-02-01"}',
    });
  }
  return range;
}

/** The aggregates section: required by the datasets that read it, refused without them. */
function checkAggregatesSection(f: FileValue, all: Set<DatasetName>, ctx: Ctx): void {
  const sectionUsers = datasetsWhere((c) => c.readsJobAggregates === true);
  if ([...all].some((d) => sectionUsers.includes(d))) {
    if (!f.aggregates || ((f.aggregates.aggregate?.length ?? 0) === 0 && (f.aggregates.group_by?.length ?? 0) === 0)) {
      issue(ctx, ['aggregates'], `needs group_by and/or aggregate: a target exports the ${sectionUsers.join(', ')} dataset`, {
        noValue: true,
        hint: 'e.g. aggregates: {group_by: [chain_id], aggregate: ["count() as tx_count"]}',
      });
    }
  } else if (f.aggregates) {
    issue(ctx, ['aggregates'], `is set but no target lists the ${sectionUsers.join(', ')} dataset`, {
      noValue: true,
      atKey: true,
      hint: `add ${sectionUsers.map((d) => `"${d}"`).join(' or ')} to a target's datasets`,
    });
  }
}

/** The output section's rules that depend on the job's datasets. */
function checkOutput(output: JobFileSettings['output'], all: Set<DatasetName>, ctx: Ctx): void {
  if (output.format === 'ndjson' && output.compression && !compressionAllowed('ndjson', output.compression)) {
    issue(ctx, ['output', 'compression'], `is not available for NDJSON (${compressionsList('ndjson')})`, {}, output.compression);
  }
  if (output.partitioning !== undefined && all.size > 1 && !partitioningUses(output.partitioning, 'dataset')) {
    issue(ctx, ['output', 'partitioning'], 'has no {dataset} but the job exports several datasets', {
      hint: 'files of different datasets have different columns: keep them in different folders',
    });
  }
}

/** The schema as published (paths do not matter for the JSON Schema). */
export const JobFileSchema = jobFileSchema({ cwd: '/', jobDir: '/', jobFile: 'job.yaml' });
export type JobFileInput = z.input<typeof JobFileSchema>;

export function jobJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(JobFileSchema, { io: 'input', target: 'draft-2020-12' }) as Record<string, unknown>;
  return { $schema: schema.$schema, title: 'insight-export job', ...schema };
}
