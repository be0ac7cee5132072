/**
 * A unit's key carries its query (filters, aggregate expressions, NFT types) and its axis: a job
 * edited so that a target's query or `range.by` changes while its table and columns stay used to
 * export the target's range again into the same table, beside the old query's rows (each
 * transaction twice, two answers for one aggregate window), in every format. Such an edit is
 * refused with exit 2 before anything is written, naming the job file, the field, the table and
 * what to do; `plan` and `run --dry-run` refuse it alike. What is no duplicate goes through: the
 * changed query in a table of its own, the changed query started after the old one's windows, an
 * old query that exported no row, a new target in the table.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ExitCode, InsightExportError } from '../../src/errors.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob, listFiles, readTable, truthWalletTransactions, unixDay, type CanonRow } from '../helpers/export.js';
import { icebirdRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 39, transactions: 3_000 });
const tmp = useTempDir('query-change-');

type Format = 'parquet' | 'ndjson' | 'iceberg';
const GAS_FLOOR = 60_000;
const FILTERED = { filter_gas_gte: GAS_FLOOR };

const wallets = (
  filters: Record<string, number>,
  range: { from: string | number; to: string | number; by?: string; chunk?: string | number },
  more = {},
) => ({
  name: 'queries',
  source: { base_url: 'sandbox', chains: [1] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'], filters, ...more }],
  range: { chunk: '6h', ...range },
});

const readRows = (out: string, table: string, format: Format): Promise<CanonRow[]> =>
  format === 'iceberg' ? icebirdRows(new LocalStore(out), table) : readTable(out, table, format);

/** Values that occur more than once. */
const twice = (values: unknown[]) => [...new Set(values.filter((v, i) => values.indexOf(v) !== i))];

/** The data files and table records at the destination, with a hash of each (what a refused run must leave as it was). */
function snapshotOf(out: string): Record<string, string> {
  const kept = listFiles(out).filter((f) => !f.startsWith('_state/') || /^_state\/[^/]+\/(tables|units|segments)\//.test(f));
  return Object.fromEntries(
    kept.map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(out, f)))
        .digest('hex'),
    ]),
  );
}

/** The outcome of a run: its report, or the error it ended with. */
const outcome = (run: Promise<unknown>): Promise<unknown> => run.catch((e: unknown) => e);

function expectRefused(got: unknown): InsightExportError {
  expect(got, `the run was not refused: ${JSON.stringify(got).slice(0, 300)}`).toBeInstanceOf(InsightExportError);
  const e = got as InsightExportError;
  expect(e.name).toBe('TableQueryChangedError');
  expect(e.exitCode).toBe(ExitCode.badInput);
  return e;
}

const alice = () => sandbox.data.wallet('alice.eth')!.address;
/** The sandbox's transactions of alice on chain 1 over [from, to) (dates), those of at least `gasFloor` gas. */
const truthHashes = (from: string, to: string, gasFloor = 0) =>
  truthWalletTransactions(sandbox.data, alice(), [1], { by: 'time', from: unixDay(from), to: unixDay(to) })
    .filter((t) => Number(t.gas) >= gasFloor)
    .map((t) => t.hash)
    .sort();

describe.each(['parquet', 'ndjson', 'iceberg'] as const)(
  'a wallet exported with a filter to %s, then edited to drop the filter',
  (format) => {
    const dir = () => join(tmp.dir, format);
    const out = () => join(dir(), 'out');
    const run = (job: Record<string, unknown>) => exportJob({ job, dir: dir(), sandbox, destination: out(), flags: { format } });
    let first: CanonRow[];
    let before: Record<string, string>;

    beforeAll(async () => {
      // Exported as a schedule does: the first half day, then the rest.
      expect((await run(wallets(FILTERED, { from: '2024-02-01', to: '2024-02-01T12:00:00Z' }))).status).toBe('succeeded');
      expect((await run(wallets(FILTERED, { from: '2024-02-01', to: '2024-02-03' }))).status).toBe('succeeded');
      first = await readRows(out(), 'transactions', format);
      expect(first.map((r) => r.hash).sort()).toEqual(truthHashes('2024-02-01', '2024-02-03', GAS_FLOOR));
      expect(first.length).toBeLessThan(truthHashes('2024-02-01', '2024-02-03').length);
      before = snapshotOf(out());
    });

    it('is refused before anything is written: the table keeps each transaction once', async () => {
      const got = await outcome(run(wallets({}, { from: '2024-02-01', to: '2024-02-03' })));
      const rows = await readRows(out(), 'transactions', format);
      expect(twice(rows.map((r) => r.item_id)), 'item ids in the table twice').toEqual([]);
      expect(rows.map((r) => r.hash).sort()).toEqual(first.map((r) => r.hash).sort());
      const e = expectRefused(got);
      expect(e.shortMessage).toBe('Table "transactions" would hold rows of two queries of targets[0] on chain 1');
      expect(e.details).toContain(`${join(dir(), 'job.yaml')} targets[0].filters: the target's query changed`);
      expect(e.details).toContain('this run would export [2024-02-01T00:00:00Z, 2024-02-03T00:00:00Z) again beside them');
      expect(e.hint).toContain('a table of its own in targets[0].tables.transactions');
      expect(e.hint).toContain('range.from: "2024-02-03T00:00:00Z"');
      expect(snapshotOf(out())).toEqual(before);
    });

    it('goes through with the changed query in a table of its own, which holds the source rows once', async () => {
      const r = await run(wallets({}, { from: '2024-02-01', to: '2024-02-03' }, { tables: { transactions: 'all_transactions' } }));
      expect(r.status).toBe('succeeded');
      const all = await readRows(out(), 'all_transactions', format);
      expect(all.map((row) => row.hash).sort()).toEqual(truthHashes('2024-02-01', '2024-02-03'));
      expect((await readRows(out(), 'transactions', format)).map((row) => row.hash).sort()).toEqual(first.map((row) => row.hash).sort());
    });
  },
);

describe.each(['parquet', 'iceberg'] as const)('the old query replaced in %s as the hint says', (format) => {
  it("takes the old query's state (and Parquet files) out; the next run fills the table with the new query's rows once", async () => {
    const dir = join(tmp.dir, `replace-${format}`);
    const out = join(dir, 'out');
    const run = (job: Record<string, unknown>) => exportJob({ job, dir, sandbox, destination: out, flags: { format } });
    expect((await run(wallets(FILTERED, { from: '2024-02-01', to: '2024-02-03' }))).status).toBe('succeeded');
    const e = expectRefused(await outcome(run(wallets({}, { from: '2024-02-01', to: '2024-02-03' }))));
    const unit = /\(<unit>: ([^)]+)\)/.exec(e.hint!)![1]!;
    expect(unit).toMatch(/^transactions\/0x[0-9a-f]{40}~[0-9a-f]{8}\/1\/time$/);
    for (const part of [`units/${unit}.json`, `segments/${unit}`, `completed/${unit}`])
      rmSync(join(out, '_state/queries', part), { recursive: true, force: true });
    if (format === 'parquet')
      for (const f of listFiles(out).filter(
        (f) => f.startsWith('transactions/chain_id=1/') && f.split('/').at(-1)!.startsWith(`${alice()}__`),
      ))
        rmSync(join(out, f));
    expect((await run(wallets({}, { from: '2024-02-01', to: '2024-02-03' }))).status).toBe('succeeded');
    expect((await readRows(out, 'transactions', format)).map((r) => r.hash).sort()).toEqual(truthHashes('2024-02-01', '2024-02-03'));
  });
});

describe('a changed query that lands on no window of the old one in its table', () => {
  it("goes through when it starts after the old query's windows, and the table holds each transaction once", async () => {
    const dir = join(tmp.dir, 'after');
    const out = join(dir, 'out');
    const run = (job: Record<string, unknown>) => exportJob({ job, dir, sandbox, destination: out });
    expect((await run(wallets(FILTERED, { from: '2024-02-01', to: '2024-02-03' }))).status).toBe('succeeded');
    const e = expectRefused(await outcome(run(wallets({}, { from: '2024-02-01', to: '2024-02-04' }))));
    expect(e.hint).toContain('range.from: "2024-02-03T00:00:00Z"');
    expect((await run(wallets({}, { from: '2024-02-03T00:00:00Z', to: '2024-02-04' }))).status).toBe('succeeded');
    const rows = await readTable(out, 'transactions', 'parquet');
    expect(rows.map((r) => r.hash).sort()).toEqual(
      [...truthHashes('2024-02-01', '2024-02-03', GAS_FLOOR), ...truthHashes('2024-02-03', '2024-02-04')].sort(),
    );
    // A new wallet in the table is a new target, not a second query of one.
    const bob = sandbox.data.wallets.find((w) => w.address !== alice())!.address;
    const two = wallets({}, { from: '2024-02-03T00:00:00Z', to: '2024-02-04' });
    two.targets.push({ wallet: bob, datasets: ['transactions'], filters: {} });
    expect((await run(two)).status).toBe('succeeded');
    expect(twice((await readTable(out, 'transactions', 'parquet')).map((r) => r.item_id))).toEqual([]);
  });

  it('goes through when the old query exported no row (its windows hold no file)', async () => {
    const dir = join(tmp.dir, 'empty');
    const out = join(dir, 'out');
    const run = (job: Record<string, unknown>) => exportJob({ job, dir, sandbox, destination: out });
    const none = await run(wallets({ filter_gas_gte: 1_000_000_000_000 }, { from: '2024-02-01', to: '2024-02-03' }));
    expect(none.status).toBe('succeeded');
    expect(listFiles(out).filter((f) => !f.startsWith('_state/'))).toEqual([]);
    expect((await run(wallets({}, { from: '2024-02-01', to: '2024-02-03' }))).status).toBe('succeeded');
    expect((await readTable(out, 'transactions', 'parquet')).map((r) => r.hash).sort()).toEqual(truthHashes('2024-02-01', '2024-02-03'));
  });
});

describe('an aggregates job whose expression changes under the same alias (max -> min)', () => {
  const daily = (aggregate: string) => ({
    name: 'daily',
    source: { base_url: 'sandbox', chains: [1] },
    targets: [{ wallet: 'alice.eth', datasets: ['aggregates'], tables: { aggregates: 'daily' } }],
    aggregates: { group_by: ['chain_id'], aggregate: [aggregate] },
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
  });

  it('is refused for an Iceberg table, naming `aggregates`: each day keeps one answer', async () => {
    const dir = join(tmp.dir, 'daily');
    const out = join(dir, 'out');
    const run = (job: Record<string, unknown>) => exportJob({ job, dir, sandbox, destination: out, flags: { format: 'iceberg' } });
    expect((await run(daily('max(gas) as g'))).status).toBe('succeeded');
    const before = snapshotOf(out);
    const got = await outcome(run(daily('min(gas) as g')));
    const rows = await icebirdRows(new LocalStore(out), 'daily');
    expect(twice(rows.map((r) => r.window_start)), 'windows with two answers').toEqual([]);
    expect(rows).toHaveLength(2);
    const e = expectRefused(got);
    expect(e.shortMessage).toContain('Table "daily"');
    expect(e.details).toContain(`${join(dir, 'job.yaml')} targets[0].filters or aggregates: the target's query changed`);
    expect(snapshotOf(out)).toEqual(before);
  });
});

describe("a wallet's NFT holdings in Iceberg whose nft_types change on the day of a snapshot", () => {
  it('are refused, naming nft_types: the day keeps each token once', async () => {
    const dir = join(tmp.dir, 'nfts');
    const out = join(dir, 'out');
    const holdings = (nft_types: string[]) => ({
      name: 'nfts',
      source: { base_url: 'sandbox', chains: [1] },
      targets: [{ wallet: 'alice.eth', datasets: ['nft_holdings'], nft_types }],
    });
    const run = (job: Record<string, unknown>) => exportJob({ job, dir, sandbox, destination: out, flags: { format: 'iceberg' } });
    expect((await run(holdings(['ERC-721']))).status).toBe('succeeded');
    const first = await icebirdRows(new LocalStore(out), 'nft_holdings');
    expect(first.length).toBeGreaterThan(0);
    const before = snapshotOf(out);
    const got = await outcome(run(holdings(['ERC-721', 'ERC-1155', 'ERC-404'])));
    const rows = await icebirdRows(new LocalStore(out), 'nft_holdings');
    expect(twice(rows.map((r) => `${r.token_address} ${r.token_id}`)), 'tokens twice').toEqual([]);
    const e = expectRefused(got);
    expect(e.details).toContain(`${join(dir, 'job.yaml')} targets[0].nft_types: the target's query changed`);
    expect(e.hint).not.toContain('range.from');
    expect(snapshotOf(out)).toEqual(before);
  });
});

describe('a wallet whose range.by changes from time to block', () => {
  it('is refused: its block windows cannot be told apart from the time windows already in the table', async () => {
    const dir = join(tmp.dir, 'axis');
    const out = join(dir, 'out');
    const run = (job: Record<string, unknown>) => exportJob({ job, dir, sandbox, destination: out });
    expect((await run(wallets({}, { from: '2024-02-01', to: '2024-02-02' }))).status).toBe('succeeded');
    const first = await readTable(out, 'transactions', 'parquet');
    const blocks = first.map((r) => Number(r.block_number));
    const before = snapshotOf(out);
    const got = await outcome(run(wallets({}, { by: 'block', from: Math.min(...blocks), to: Math.max(...blocks) + 1, chunk: 1000 })));
    expect(twice((await readTable(out, 'transactions', 'parquet')).map((r) => r.item_id))).toEqual([]);
    const e = expectRefused(got);
    expect(e.details).toContain(`${join(dir, 'job.yaml')} range.by: the target's windows count blocks now, time when its rows`);
    expect(snapshotOf(out)).toEqual(before);
  });
});

describe('plan and run --dry-run', () => {
  it('refuse the edit as run does: exit 2 naming the table, the job file and the field, nothing written', async () => {
    const dir = join(tmp.dir, 'cli');
    const out = join(dir, 'out');
    expect(
      (await exportJob({ job: wallets(FILTERED, { from: '2024-02-01', to: '2024-02-03' }), dir, sandbox, destination: out })).status,
    ).toBe('succeeded');
    const before = snapshotOf(out);
    const file = join(dir, 'job.yaml');
    writeFileSync(file, stringify(wallets({}, { from: '2024-02-01', to: '2024-02-03' })));
    const flags = ['--destination', out, '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, '--log-level', 'silent'];
    for (const argv of [
      ['plan', file],
      ['run', file, '--dry-run'],
    ]) {
      const res = await runCli([...argv, ...flags]);
      expect(res.code, res.stderr).toBe(ExitCode.badInput);
      expect(res.stderr).toContain('Table "transactions" would hold rows of two queries of targets[0] on chain 1');
      expect(res.stderr).toContain(`${file} targets[0].filters`);
    }
    expect(snapshotOf(out)).toEqual(before);
  });
});
