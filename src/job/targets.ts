/** The targets of a job file normalised: chains, datasets, filters and tables checked against the job, defaults filled. */
import path from 'node:path';
import { defaultDatasets, datasetsWhere, type DatasetName, type TargetKind } from '../datasets/index.js';
import { didYouMean } from '../yaml-file/issues.js';
import type { FileProblem } from '../yaml-file/problems.js';
import type { FileValue, JobSchemaContext } from './file-shape.js';
import { filterRoute, filtersOf, parseFilterValue, RANGE_FILTERS } from './filters.js';
import { NFT_TYPES, type JobEvent, type TableNames, type Target } from './job.js';
import { issue, type Ctx } from './schema-issue.js';

const ROUTE_NAMES = { wallet: 'wallet transactions', contract: 'contract events' } as const;

export function checkChains(chains: number[], ctx: Ctx, at: (string | number)[]) {
  const seen = new Set<number>();
  chains.forEach((c, i) => {
    if (seen.has(c)) issue(ctx, [...at, i], 'is listed twice');
    seen.add(c);
  });
}

type FileTarget = FileValue['targets'][number];
type FileWalletTarget = Extract<FileTarget, { wallet: unknown }>;
type FileContractTarget = Extract<FileTarget, { contract: unknown }>;
type FileChainTarget = Exclude<FileTarget, FileWalletTarget | FileContractTarget>;

/** What the targets' checks share across targets: each target's key (to refuse a second one), job filters already reported. */
export interface SeenTargets {
  keys: Map<string, number>;
  reportedJobFilters: Set<string>;
}

export interface TargetCheck {
  f: FileValue;
  ctx: Ctx;
  sctx: JobSchemaContext;
  seen: SeenTargets;
  warnings: FileProblem[];
}

/** One target of the file: its chains, datasets and filters checked, defaults filled. */
export function normaliseTarget(c: TargetCheck, t: FileTarget, index: number): Target {
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
