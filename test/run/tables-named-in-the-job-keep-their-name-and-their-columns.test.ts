/**
 * Issue 31.10: table names carried a schema hash (`events_transfer_ddf252ad_8174ae`), so editing
 * an event or an aggregate query made a new table while warehouses point at a name. A job names
 * its tables with `tables:`; the rows go there (NDJSON and Parquet, and ddl declares them), an
 * edit that keeps the columns keeps writing there, and an edit that changes them is refused with
 * exit 2 before anything is written, naming the table, the job file and the field.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { ExitCode, InsightExportError } from '../../src/errors.js';
import { loadJob } from '../../src/job/index.js';
import { generateDdl, exportLayout } from '../../src/warehouse/ddl.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { jobTables } from '../../src/run/tables.js';
import { exportJob, listFiles, readTable } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42 });
const tmp = useTempDir('named-tables-');

const transfer = (value: string) => `Transfer(address indexed from, address indexed to, uint256 ${value})`;

function job(format: 'ndjson' | 'parquet', value = 'value', range = { from: '2024-02-01', to: '2024-02-02' }) {
  const token = sandbox.data.contracts.find((c) => c.kind === 'erc20' && c.chainId === 1)!;
  return {
    name: 'named',
    source: { base_url: 'sandbox', chains: [1] },
    targets: [
      { wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'], tables: { transactions: 'wallet_txs' } },
      {
        contract: token.address,
        datasets: ['events', 'aggregates'],
        events: [{ signature: transfer(value), tables: { events: 'transfers', aggregates: 'transfers_daily' } }],
      },
    ],
    aggregates: { group_by: ['chain_id'], aggregate: ['count() as transfers'] },
    range: { ...range, chunk: '1d' },
    output: { format },
  };
}

const topFolders = (out: string) => [...new Set(listFiles(out).map((f) => f.split('/')[0]!))].sort();
const dataFiles = (out: string) => listFiles(out).filter((f) => !f.startsWith('_state/'));

describe('tables named in the job', () => {
  it.each(['ndjson', 'parquet'] as const)('hold the rows in %s under those names, and ddl declares them', async (format) => {
    const dir = join(tmp.dir, format);
    const out = join(dir, 'out');
    const report = await exportJob({ job: job(format), dir, sandbox, destination: out });
    expect(report.status).toBe('succeeded');
    expect(topFolders(out)).toEqual(['_state', 'transfers', 'transfers_daily', 'wallet_txs']);
    expect((await readTable(out, 'transfers', format)).length).toBeGreaterThan(0);
    expect((await readTable(out, 'wallet_txs', format)).length).toBeGreaterThan(0);
    const daily = await readTable(out, 'transfers_daily', format);
    expect(daily.length).toBe(1);
    expect(Number(daily[0]!.transfers)).toBe((await readTable(out, 'transfers', format)).length);

    const tables = await jobTables(await loadJob(join(dir, 'job.yaml')));
    const ddl = generateDdl({
      dialect: 'duckdb',
      tables,
      layout: exportLayout(DEFAULT_PARTITIONING, 'named'),
      location: out,
      format,
      compression: format === 'parquet' ? 'zstd' : 'gzip',
      chains: [1],
      jobName: 'named',
    });
    for (const name of ['transfers', 'transfers_daily', 'wallet_txs']) {
      expect(ddl).toMatch(new RegExp(`VIEW\\s+"?${name}"?\\s`, 'i'));
      expect(ddl).toContain(`${out}/${name}/`);
    }
    expect(ddl).not.toMatch(/events_transfer_|aggregates_/);
  });

  it('keep the table when an event parameter is renamed to the same column, and refuse a rename that changes the columns', async () => {
    const dir = join(tmp.dir, 'edits');
    const out = join(dir, 'out');
    expect((await exportJob({ job: job('ndjson'), dir, sandbox, destination: out })).status).toBe('succeeded');
    const firstDay = dataFiles(out);
    expect(listFiles(out).filter((f) => f.startsWith('_state/named/tables/'))).toEqual(
      ['transfers', 'transfers_daily', 'wallet_txs'].map((t) => `_state/named/tables/${t}.json`),
    );

    // `_value` is column arg_value like `value`: the same table, one more day of files in it.
    const nextDay = { from: '2024-02-02', to: '2024-02-03' };
    expect((await exportJob({ job: job('ndjson', '_value', nextDay), dir, sandbox, destination: out })).status).toBe('succeeded');
    expect(topFolders(out)).toEqual(['_state', 'transfers', 'transfers_daily', 'wallet_txs']);
    const twoDays = dataFiles(out);
    expect(twoDays.filter((f) => f.startsWith('transfers/')).length).toBeGreaterThan(
      firstDay.filter((f) => f.startsWith('transfers/')).length,
    );

    // `amount` is column arg_amount: refused before anything is written.
    const err = await exportJob({
      job: job('ndjson', 'amount', { from: '2024-02-03', to: '2024-02-04' }),
      dir,
      sandbox,
      destination: out,
    }).then(
      (r) => {
        throw new Error(`the edit was not refused: ${r.status}`);
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InsightExportError);
    const e = err as InsightExportError;
    expect(e.exitCode).toBe(ExitCode.badInput);
    expect(e.shortMessage).toContain('"transfers"');
    expect(e.details).toContain(`${join(dir, 'job.yaml')} targets[1].events[0].tables.events`);
    expect(e.details).toMatch(/no longer has arg_value uint256.*would add arg_amount uint256/);
    expect(dataFiles(out)).toEqual(twoDays);

    // Through the CLI: run exits 2 naming file, field and table, and plan refuses it the same way.
    const file = join(dir, 'job.yaml');
    const flags = ['--destination', out, '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, '--log-level', 'silent'];
    for (const command of ['run', 'plan']) {
      const res = await runCli([command, file, ...flags]);
      expect(res.code, res.stderr).toBe(ExitCode.badInput);
      expect(res.stderr).toContain('Table "transfers"');
      expect(res.stderr).toContain(`${file} targets[1].events[0].tables.events`);
    }
    expect(dataFiles(out)).toEqual(twoDays);
  });

  it('refuse two datasets sent to one name', async () => {
    const dir = join(tmp.dir, 'clash');
    const j = job('ndjson');
    (j.targets[0] as { tables: Record<string, string> }).tables = { transactions: 'transfers' };
    const out = join(dir, 'out');
    const err = await exportJob({ job: j, dir, sandbox, destination: out }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsightExportError);
    expect((err as InsightExportError).exitCode).toBe(ExitCode.badInput);
    expect((err as InsightExportError).details).toMatch(
      /job\.yaml:\d+:\d+ targets\[1\]\.events\[0\]\.tables\.events against \S*job\.yaml:\d+:\d+ targets\[0\]\.tables\.transactions: it holds transactions/,
    );
    expect(dataFiles(out)).toEqual([]);
  });
});
