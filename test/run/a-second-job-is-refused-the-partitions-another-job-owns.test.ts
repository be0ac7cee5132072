/**
 * Issue 14.4: two jobs exporting the same target under one destination wrote the same partitions:
 * rows there twice, and each job's verify flagged the other's files. The second job is refused
 * (exit 2, naming the owner and the partitions) before it writes a file; a job that partitions by
 * `{job}` writes its own folders, and verify of the first job does not count those as its own.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode, InsightExportError } from '../../src/errors.js';
import { loadJob } from '../../src/job/index.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { verifyDestination } from '../../src/state/verify.js';
import { openStore } from '../../src/store/open-store.js';
import { duckdb, exportJob, listFiles, sqlString } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('owners-');

function job(name: string, range: Record<string, unknown>, output: Record<string, unknown> = {}) {
  return {
    name,
    source: { base_url: 'sandbox', chains: [1] },
    targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
    range: { by: 'time', chunk: '1d', ...range },
    output: { format: 'ndjson', ...output },
  };
}

async function rowsAndDistinct(out: string): Promise<{ rows: number; distinct: number }> {
  const [r] = await duckdb(
    `SELECT count(*)::INT AS rows, count(DISTINCT item_id)::INT AS distinct FROM read_json(${sqlString(`${out}/transactions/**/*.ndjson.gz`)}, format = 'newline_delimited')`,
  );
  return { rows: r!.rows as number, distinct: r!.distinct as number };
}

async function verifyJob(dir: string, file: string, out: string, partitioning: string) {
  const store = await openStore(out, {});
  try {
    return await verifyDestination({ store, job: await loadJob(join(dir, file)), output: { partitioning, format: 'ndjson' } });
  } finally {
    await store.close?.();
  }
}

describe('two jobs with the same target under one destination', () => {
  it('refuse the second job with exit 2 naming the first and its partitions, and write none of its rows', async () => {
    const dir = join(tmp.dir, 'same');
    const out = join(dir, 'out');
    const first = await exportJob({
      job: job('first', { from: '2024-02-01', to: '2024-02-03' }),
      dir,
      jobFileName: 'first.yaml',
      sandbox,
      destination: out,
    });
    expect(first.status).toBe('succeeded');
    const before = await rowsAndDistinct(out);
    expect(before.rows).toBeGreaterThan(0);
    expect(before.distinct).toBe(before.rows);
    const filesBefore = listFiles(out).filter((f) => !f.startsWith('_state/'));

    const err = await exportJob({
      job: job('second', { from: '2024-02-02', to: '2024-02-05', chunk: '12h' }),
      dir,
      jobFileName: 'second.yaml',
      sandbox,
      destination: out,
    }).then(
      (r) => {
        throw new Error(`the second job was not refused: ${r.status}, ${r.rows} rows`);
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InsightExportError);
    const e = err as InsightExportError;
    expect(e.exitCode).toBe(ExitCode.badInput);
    expect(e.shortMessage).toContain('first');
    expect(e.details).toContain(`transactions of ${sandbox.data.wallets[0]!.address.toLowerCase()} on chain 1`);
    expect(e.hint).toMatch(/another destination prefix/);
    expect(listFiles(out).filter((f) => !f.startsWith('_state/'))).toEqual(filesBefore);
    expect(existsSync(join(out, '_state', 'second', 'completed'))).toBe(false);
    expect(existsSync(join(out, '_state', 'second', 'units'))).toBe(false);
    expect(await rowsAndDistinct(out)).toEqual(before);

    // The owner keeps running there, and its proof of completeness holds.
    const again = await exportJob({
      job: job('first', { from: '2024-02-01', to: '2024-02-04' }),
      dir,
      jobFileName: 'first.yaml',
      sandbox,
      destination: out,
    });
    expect(again.status).toBe('succeeded');
    const report = await verifyJob(dir, 'first.yaml', out, DEFAULT_PARTITIONING);
    expect(report.problems).toEqual([]);
  });

  it('let a job that partitions by {job} write its own folders, and verify of the other job does not flag them', async () => {
    const dir = join(tmp.dir, 'by-job');
    const out = join(dir, 'out');
    const byJob = '{dataset}/job={job}/chain_id={chain_id}/date={date}';
    const range = { from: '2024-02-01', to: '2024-02-03' };
    expect((await exportJob({ job: job('plain', range), dir, jobFileName: 'plain.yaml', sandbox, destination: out })).status).toBe(
      'succeeded',
    );
    expect(
      (await exportJob({ job: job('own', range, { partitioning: byJob }), dir, jobFileName: 'own.yaml', sandbox, destination: out }))
        .status,
    ).toBe('succeeded');
    expect(listFiles(out).some((f) => f.startsWith('transactions/job=own/'))).toBe(true);

    const plain = await verifyJob(dir, 'plain.yaml', out, DEFAULT_PARTITIONING);
    expect(plain.problems).toEqual([]);
    expect(plain.files.unreferenced).toBe(0);
    const own = await verifyJob(dir, 'own.yaml', out, byJob);
    expect(own.problems).toEqual([]);
  });
});
