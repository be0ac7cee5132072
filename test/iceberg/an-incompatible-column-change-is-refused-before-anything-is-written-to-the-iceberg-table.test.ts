/**
 * Issue 34.4: an Iceberg table takes added columns and int32 -> int64; any other change of its
 * columns is refused with exit 2 before the run writes anything (no data file, no metadata
 * version, the table record as it was), naming the table, the job file and its field, the column
 * and what changed, and what to do: decoding turned off again (its columns removed: Iceberg would
 * hide them from every older row), and an aggregate whose type changes (int64 -> string). The CLI's
 * `run` and `plan` refuse alike, and the table commit itself refuses ids that disagree with the
 * table's. A Parquet table still refuses an added column.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { column } from '../../src/columns/columns.js';
import { AGGREGATE_FIXED_COLUMNS } from '../../src/datasets/aggregates.js';
import { ExitCode, InsightExportError } from '../../src/errors.js';
import { commitIcebergTables } from '../../src/iceberg/index.js';
import { silentLogger } from '../../src/log.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { WindowState } from '../../src/state/window-state.js';
import { LocalStore } from '../../src/store/local.js';
import { exportJob, listFiles } from '../helpers/export.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 39, transactions: 3_000 });
const tmp = useTempDir('iceberg-refused-');

const range = { from: '2024-02-01', to: '2024-02-02', chunk: '1d' };
const nextDay = { from: '2024-02-02', to: '2024-02-03', chunk: '1d' };

const wallets = (decode: boolean, r = range) => ({
  name: 'refused',
  source: { base_url: 'sandbox', chains: [1] },
  targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
  range: r,
  decode,
});

const daily = (aggregate: string[], r = range) => ({
  name: 'refused-daily',
  source: { base_url: 'sandbox', chains: [1] },
  targets: [{ wallet: 'alice.eth', datasets: ['aggregates'], tables: { aggregates: 'daily' } }],
  aggregates: { group_by: ['chain_id'], aggregate },
  range: r,
});

/** The tables at the destination (data files, metadata versions and their Avro files) and their records, with a hash of each. */
function snapshotOf(out: string): Record<string, string> {
  const kept = listFiles(out).filter((f) => !f.startsWith('_state/') || /^_state\/[^/]+\/tables\//.test(f));
  return Object.fromEntries(
    kept.map((f) => [
      f,
      createHash('sha256')
        .update(readFileSync(join(out, f)))
        .digest('hex'),
    ]),
  );
}

async function refusal(run: Promise<unknown>): Promise<InsightExportError> {
  const err = await run.then(
    (r) => {
      throw new Error(`the edit was not refused: ${JSON.stringify(r).slice(0, 200)}`);
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InsightExportError);
  return err as InsightExportError;
}

describe('an Iceberg table', () => {
  let dir: string;
  let out: string;
  let before: Record<string, string>;

  beforeAll(async () => {
    dir = join(tmp.dir, 'wallets');
    out = join(dir, 'out');
    const r = await exportJob({ job: wallets(true), dir, sandbox, destination: out, flags: { format: 'iceberg' } });
    expect(r.status).toBe('succeeded');
    before = snapshotOf(out);
    expect(Object.keys(before).filter((f) => f.endsWith('.iceberg.parquet')).length).toBeGreaterThan(0);
    expect(Object.keys(before)).toContain('transactions/metadata/v1.metadata.json');
    expect(Object.keys(before)).toContain('_state/refused/tables/transactions.json');
  });

  it('refuses decoding turned off (columns removed), naming the table, the job file and field, the columns, and what to do', async () => {
    const e = await refusal(exportJob({ job: wallets(false, nextDay), dir, sandbox, destination: out, flags: { format: 'iceberg' } }));
    expect(e.name).toBe('IcebergTableRefusedError');
    expect(e.exitCode).toBe(ExitCode.badInput);
    expect(e.shortMessage).toContain('"transactions"');
    expect(e.details).toContain(`${join(dir, 'job.yaml')} targets[0].datasets`);
    expect(e.details).toMatch(/no longer has decoded_function_name string; no longer has decoded_signature string/);
    expect(e.hint).toMatch(/new table name in targets\[0\]\.datasets, or undo the edit/);
    expect(snapshotOf(out)).toEqual(before);
  });

  it('is refused the same way by the CLI: run and plan exit 2 naming the table, and nothing is written', async () => {
    const file = join(dir, 'job.yaml');
    const flags = ['--destination', out, '--base-url', sandbox.url, '--explorer-url', sandbox.explorerUrl, '--format', 'iceberg'];
    for (const command of ['run', 'plan']) {
      const res = await runCli([command, file, ...flags, '--log-level', 'silent']);
      expect(res.code, res.stderr).toBe(ExitCode.badInput);
      expect(res.stderr).toContain('Iceberg table "transactions" cannot take the job\'s columns');
      expect(res.stderr).toContain(`${file} targets[0].datasets`);
    }
    expect(snapshotOf(out)).toEqual(before);
  });
});

describe('an Iceberg table of aggregates', () => {
  it('refuses a column whose type changes (count -> avg: int64 -> string) and writes nothing', async () => {
    const dir = join(tmp.dir, 'daily');
    const out = join(dir, 'out');
    const first = await exportJob({ job: daily(['count() as txs']), dir, sandbox, destination: out, flags: { format: 'iceberg' } });
    expect(first.status).toBe('succeeded');
    const before = snapshotOf(out);
    const e = await refusal(
      exportJob({ job: daily(['avg(gas) as txs'], nextDay), dir, sandbox, destination: out, flags: { format: 'iceberg' } }),
    );
    expect(e.name).toBe('IcebergTableRefusedError');
    expect(e.exitCode).toBe(ExitCode.badInput);
    expect(e.shortMessage).toContain('"daily"');
    expect(e.details).toContain(`${join(dir, 'job.yaml')} targets[0].tables.aggregates`);
    expect(e.details).toContain('txs was int64, now string');
    expect(snapshotOf(out)).toEqual(before);

    // The table commit checks the ids it is given against the table's own (a table record edited by hand).
    const store = new LocalStore(out);
    const columns = [...AGGREGATE_FIXED_COLUMNS, column('txs', 'int64', 'count')].map((c, i) => ({ ...c, fieldId: i < 5 ? i + 1 : 7 }));
    const commit = commitIcebergTables({
      store,
      state: new WindowState(store, 'refused-daily'),
      tables: [{ name: 'daily', columns, units: [] }],
      partitioning: DEFAULT_PARTITIONING,
      compression: 'zstd',
      runId: 'by-hand',
      logger: silentLogger,
    });
    await expect(commit).rejects.toMatchObject({
      name: 'IcebergTableRefusedError',
      shortMessage: expect.stringContaining('"daily"'),
      details: expect.stringContaining("txs has field id 6 in the table, 7 in the job's record"),
    });
    expect(snapshotOf(out)).toEqual(before);
  });
});

describe('a Parquet table', () => {
  it('still refuses decoding turned on (columns added), as any change of its columns', async () => {
    const dir = join(tmp.dir, 'parquet');
    const out = join(dir, 'out');
    expect((await exportJob({ job: wallets(false), dir, sandbox, destination: out, flags: { format: 'parquet' } })).status).toBe(
      'succeeded',
    );
    const before = snapshotOf(out);
    const e = await refusal(exportJob({ job: wallets(true, nextDay), dir, sandbox, destination: out, flags: { format: 'parquet' } }));
    expect(e.name).toBe('TableColumnsChangedError');
    expect(e.exitCode).toBe(ExitCode.badInput);
    expect(e.details).toMatch(/would add decoded_function_name string/);
    expect(snapshotOf(out)).toEqual(before);
  });
});
