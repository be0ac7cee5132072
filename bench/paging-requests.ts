/**
 * Page requests of the bench's wallet job (the sandbox's hot wallet on chains 1, 8453 and 42161,
 * every day of the data, 1-day windows, default page size) against the floor, the fewest page-0
 * requests that can prove every slice, per sandbox profile. Not a test: prints one JSON line per
 * profile, then a Markdown table and the floor's definition.
 *
 *   node --import tsx bench/paging-requests.ts                                        # contract, indexer, hostile
 *   node --import tsx bench/paging-requests.ts --profiles contract --transactions 1000000 --check
 *
 * page_requests: requests on the wallet route, less the answers the sandbox broke on purpose (each
 * is retried); requests: every request of the run (checks, heads, window edges, pages, retries).
 * rows_exported / rows_truth: what the run wrote and what the wallet holds in the range.
 * With --check, every exported row is read back (NDJSON) and compared with the sandbox's records:
 * same item_id set, no duplicate, every field the record has equal.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolveConfig } from '../src/config/index.js';
import { loadJob } from '../src/job/index.js';
import { silentLogger } from '../src/log.js';
import { sliceSizes } from '../src/run/export-windows.js';
import { runJob } from '../src/run/run-job.js';
import { buildSandboxData, startSandbox, type SandboxData, type SandboxProfile } from '@insight-export/sandbox';
import { chainIdBatches, MAX_CHAIN_IDS } from '../src/source/query.js';

const CHAINS = [1, 8453, 42161];
const FROM = '2024-02-01';
const DAY = 86_400;

export const FLOOR_DEFINITION = [
  'floor: per window and batch of up to 55 chains (one request names at most 55), 1 request for the chains',
  'holding fewer than `limit` rows (one short answer proves each of them), plus ⌈rows / (limit − 1)⌉ for each',
  'chain holding `limit` rows or more (only an answer of at most limit − 1 rows for the chain proves its',
  'slice, so it pages alone in slices of at most limit − 1 rows). It is reached by knowing every count',
  'beforehand, cutting each slice at exactly limit − 1 rows and never receiving a full answer.',
  'floor_shared: the same when the dense chains of a batch share their slices too (a request names every',
  'chain of the batch, cut on the window axis where the next second would give any chain `limit` rows;',
  'the fewest for requests that name every chain): what grouping chains by density could reach.',
].join(' ');

export interface PagingMeasurement {
  profile: string;
  transactions: number;
  page_size: number | 'default';
  limit: number;
  status: string;
  rows_truth: number;
  rows_exported: number;
  windows: number;
  requests: number;
  retries: number;
  /** Answers of the sandbox by HTTP status, and those it broke on purpose by kind. */
  statuses: Record<number, number>;
  faults: Record<string, number>;
  page_requests: number;
  floor: number;
  floor_shared: number;
  ratio: number;
  page_requests_per_1000_rows: number;
  requests_per_1000_rows: number;
  /**
   * The run after it, against the same service (nothing new to export): its requests, and the
   * requests of both runs per 1,000 rows.
   */
  next_run_requests: number;
  two_runs_requests_per_1000_rows: number;
  seconds: number;
  check?: { distinct_ids: number; duplicates: number; unknown_ids: number; missing_ids: number; fields_differing: number };
}

/** Block timestamps of one window's rows, by chain (every chain that has the window, with or without rows). */
type WindowRows = Map<number, number[]>;

/**
 * The floor and the shared floor (see FLOOR_DEFINITION) of windows given as the block timestamps
 * of their rows by chain, for the job's chains (in the job's order) and the `limit` sent.
 */
export function pagingFloor(windows: WindowRows[], chains: number[], limit: number): { floor: number; shared: number } {
  let floor = 0;
  let shared = 0;
  for (const w of windows) {
    for (const batch of chainIdBatches(
      chains.filter((c) => w.has(c)),
      MAX_CHAIN_IDS,
    )) {
      const counts = batch.map((c) => w.get(c)!.length);
      if (counts.some((n) => n < limit)) floor++;
      for (const n of counts) if (n >= limit) floor += Math.ceil(n / (limit - 1));
      shared += sharedSlices(
        batch.map((c) => w.get(c)!),
        limit,
      );
    }
  }
  return { floor, shared };
}

/**
 * Slices of a window on its axis that every chain's request shares: the greedy sweep (each slice
 * ends where the next second would give a chain `limit` rows), the fewest such slices.
 */
function sharedSlices(byChain: number[][], limit: number): number {
  const events = byChain.flatMap((ts, chain) => ts.map((t) => [t, chain] as const)).sort((a, b) => a[0] - b[0]);
  let slices = 1;
  let inSlice = byChain.map(() => 0);
  for (let i = 0; i < events.length;) {
    let j = i;
    const add = byChain.map(() => 0);
    while (j < events.length && events[j]![0] === events[i]![0]) add[events[j++]![1]]!++;
    if (inSlice.some((n, c) => n + add[c]! >= limit)) {
      slices++;
      inSlice = add;
    } else inSlice = inSlice.map((n, c) => n + add[c]!);
    i = j;
  }
  return slices;
}

export async function measurePaging(opts: {
  profile: SandboxProfile;
  transactions: number;
  data?: SandboxData;
  pageSize?: number;
  check?: boolean;
}): Promise<PagingMeasurement> {
  const { profile, transactions, pageSize } = opts;
  const sandbox = await startSandbox({ seed: 42, transactions, profile, ...(opts.data ? { data: opts.data } : {}) });
  const work = mkdtempSync(join(tmpdir(), 'insight-paging-'));
  try {
    const data = sandbox.data;
    const wallet = data.wallets[0]!;
    const newest = Math.max(...data.chains.map((c) => c.headTimestamp));
    const to = new Date((Math.floor(newest / DAY) + 1) * DAY * 1000).toISOString().slice(0, 10);
    const jobFile = join(work, 'job.yaml');
    // JSON is YAML: the job file as one object.
    const spec = {
      name: 'bench',
      source: { base_url: 'sandbox', chains: CHAINS },
      targets: [{ wallet: wallet.address, datasets: ['transactions'] }],
      range: { from: FROM, to, chunk: '1d' },
      decode: false,
    };
    writeFileSync(jobFile, JSON.stringify(spec));
    const job = await loadJob(jobFile);
    const out = join(work, 'out');
    const config = resolveConfig({
      job,
      env: {},
      configFile: null,
      cliFlags: { baseUrl: sandbox.url, destination: out, stagingDir: join(work, 'staging'), format: 'ndjson', compression: 'none' },
      require: ['source', 'destination'],
    });
    const t0 = performance.now();
    const report = await runJob({ job, config, logger: silentLogger, ...(pageSize ? { pageSize } : {}) });
    const seconds = (performance.now() - t0) / 1000;
    const stats = sandbox.stats();
    // The next run (a cron's next tick): what settling the first run's windows costs.
    const next = await runJob({ job, config, logger: silentLogger, ...(pageSize ? { pageSize } : {}) });
    const broken = Object.values(stats.faultsInjected).reduce((n, k) => n + k, 0);
    const pageRequests = (stats.byRoute.transactions ?? 0) - broken;
    const from = Date.parse(FROM) / 1000;
    // `to` lies past every chain's head: each chain is exported up to its head minus the safety lag
    // (900 s), in 1-day windows from midnight, the last one ending there. Chains share a window's
    // requests when its bounds are the same (see exportWindows).
    const windows = new Map<string, WindowRows>();
    const truth = CHAINS.flatMap((c) => {
      const end = Math.min(Date.parse(to) / 1000, data.chain(c)!.headTimestamp - 900 + 1);
      const windowOf = (t: number) => `${Math.floor(t / DAY)}-${Math.min((Math.floor(t / DAY) + 1) * DAY, end)}`;
      for (let day = from; day < end; day += DAY) windows.set(windowOf(day), (windows.get(windowOf(day)) ?? new Map()).set(c, []));
      const rows = data.allWalletTransactions(
        wallet.address,
        data.parseTransactionsQuery(`chain_id=${c}&filter_block_timestamp_gte=${from}&filter_block_timestamp_lt=${end}`),
      );
      for (const r of rows) windows.get(windowOf(r.block_timestamp))!.get(c)!.push(r.block_timestamp);
      return rows;
    });
    const { limit } = sliceSizes(pageSize);
    const floor = pagingFloor([...windows.values()], CHAINS, limit);
    const per1000 = (n: number) => Math.round((n / truth.length) * 1000 * 100) / 100;
    const result: PagingMeasurement = {
      profile,
      transactions,
      page_size: pageSize ?? 'default',
      limit,
      status: report.status,
      rows_truth: truth.length,
      rows_exported: report.rows,
      windows: windows.size,
      requests: report.requests,
      retries: report.retries,
      statuses: stats.byStatus,
      faults: stats.faultsInjected,
      page_requests: pageRequests,
      floor: floor.floor,
      floor_shared: floor.shared,
      ratio: Math.round((pageRequests / floor.floor) * 100) / 100,
      page_requests_per_1000_rows: per1000(pageRequests),
      requests_per_1000_rows: per1000(report.requests),
      next_run_requests: next.requests,
      two_runs_requests_per_1000_rows: per1000(report.requests + next.requests),
      seconds: Math.round(seconds * 10) / 10,
    };
    if (opts.check) result.check = checkRows(join(out, 'transactions'), truth, wallet.address);
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
    await sandbox.close();
  }
}

/** Every exported row read back against the sandbox's records. */
function checkRows(dir: string, truth: { chain_id: number; hash: string }[], wallet: string): NonNullable<PagingMeasurement['check']> {
  const byId = new Map(truth.map((t) => [`${t.chain_id}:${t.hash}:${wallet}`, t as unknown as Record<string, unknown>]));
  const seen = new Set<string>();
  let duplicates = 0;
  let unknown = 0;
  let fieldsDiffering = 0;
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.ndjson') ? [join(d, e.name)] : [],
    );
  for (const file of walk(dir)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line) continue;
      const row = JSON.parse(line) as Record<string, unknown>;
      const id = row.item_id as string;
      if (seen.has(id)) duplicates++;
      seen.add(id);
      const rec = byId.get(id);
      if (!rec) {
        unknown++;
        continue;
      }
      for (const [k, v] of Object.entries(rec)) {
        if (!(k in row) || k === 'decoded') continue;
        if (String(row[k] ?? null) !== String(v ?? null)) fieldsDiffering++;
      }
    }
  }
  return {
    distinct_ids: seen.size,
    duplicates,
    unknown_ids: unknown,
    missing_ids: [...byId.keys()].filter((k) => !seen.has(k)).length,
    fields_differing: fieldsDiffering,
  };
}

/** The measurements as a Markdown table. */
export function pagingTable(results: PagingMeasurement[]): string {
  const exact = (r: PagingMeasurement) =>
    r.check
      ? r.check.missing_ids + r.check.duplicates + r.check.unknown_ids + r.check.fields_differing === 0
        ? 'exact'
        : `NOT exact ${JSON.stringify(r.check)}`
      : r.rows_exported === r.rows_truth
        ? 'rows equal (no --check)'
        : 'NOT equal';
  return [
    '| profile | rows | windows | page requests | floor | page requests / floor | floor_shared | page requests / 1,000 rows | all requests | all / 1,000 rows | next run: requests | both runs / 1,000 rows | rows written |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.profile} | ${r.rows_truth} | ${r.windows} | ${r.page_requests} | ${r.floor} | ${r.ratio} | ${r.floor_shared} | ${r.page_requests_per_1000_rows} | ${r.requests} | ${r.requests_per_1000_rows} | ${r.next_run_requests} | ${r.two_runs_requests_per_1000_rows} | ${exact(r)} |`,
    ),
  ].join('\n');
}

async function main(argv: string[]): Promise<void> {
  const get = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const profiles = (get('profiles') ?? get('profile') ?? 'contract,indexer,hostile').split(',') as SandboxProfile[];
  const transactions = Number(get('transactions') ?? 200_000);
  const pageSize = get('page-size') ? Number(get('page-size')) : undefined;
  const check = argv.includes('--check');
  const data = buildSandboxData({ seed: 42, transactions });
  const results: PagingMeasurement[] = [];
  for (const profile of profiles) {
    const r = await measurePaging({ profile, transactions, data, ...(pageSize ? { pageSize } : {}), check });
    process.stdout.write(`${JSON.stringify(r)}\n`);
    results.push(r);
  }
  process.stdout.write(`\n${pagingTable(results)}\n\n${FLOOR_DEFINITION}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(process.argv.slice(2));
