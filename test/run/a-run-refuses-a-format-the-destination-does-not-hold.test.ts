/**
 * Issue 14.5: `run --format parquet` on a destination holding the job's NDJSON export found every
 * window done, wrote nothing and exited 0. Completed windows are not per format, so the run is
 * refused (exit 2, naming the format held and what to do) and verify says the same; `--force`
 * exports every window again in the new format and replaces the old files.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode, InsightExportError } from '../../src/errors.js';
import { loadJob } from '../../src/job/index.js';
import { DEFAULT_PARTITIONING } from '../../src/sink/partitioning.js';
import { verifyDestination } from '../../src/state/verify.js';
import { openStore } from '../../src/store/open-store.js';
import { exportJob, listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 5_000 });
const tmp = useTempDir('format-switch-');

const dataFiles = (out: string) => listFiles(out).filter((f) => !f.startsWith('_state/'));

async function verifyAs(dir: string, out: string, format: 'parquet' | 'ndjson') {
  const store = await openStore(out, {});
  try {
    return await verifyDestination({
      store,
      job: await loadJob(join(dir, 'job.yaml')),
      output: { partitioning: DEFAULT_PARTITIONING, format },
    });
  } finally {
    await store.close?.();
  }
}

describe('switching --format on an existing destination', () => {
  it('is refused with exit 2 naming the format held; verify agrees; --force rewrites it in the new format', async () => {
    const dir = join(tmp.dir, 'switch');
    const out = join(dir, 'out');
    const job = {
      name: 'switch',
      source: { base_url: 'sandbox', chains: [1] },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { by: 'time', from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    };
    const first = await exportJob({ job, dir, sandbox, destination: out, flags: { format: 'ndjson' } });
    expect(first.status).toBe('succeeded');
    expect(first.rows).toBeGreaterThan(0);
    const ndjson = dataFiles(out);
    expect(ndjson.length).toBeGreaterThan(0);
    expect(ndjson.every((f) => f.endsWith('.ndjson.gz'))).toBe(true);

    const err = await exportJob({ job, dir, sandbox, destination: out, flags: { format: 'parquet' } }).then(
      (r) => {
        throw new Error(`the run was not refused: ${r.status}, ${r.rows} rows`);
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InsightExportError);
    const e = err as InsightExportError;
    expect(e.exitCode).toBe(ExitCode.badInput);
    expect(e.shortMessage).toMatch(/holds ndjson/);
    expect(e.hint).toMatch(/--format ndjson/);
    expect(e.hint).toMatch(/--force/);
    expect(dataFiles(out)).toEqual(ndjson);

    expect((await verifyAs(dir, out, 'ndjson')).problems).toEqual([]);
    const asParquet = await verifyAs(dir, out, 'parquet');
    expect(asParquet.ok).toBe(false);
    expect(asParquet.problems.map((p) => p.kind)).toEqual(['other-format']);

    const forced = await exportJob({ job, dir, sandbox, destination: out, flags: { format: 'parquet' }, force: true });
    expect(forced.status).toBe('succeeded');
    expect(forced.rows).toBe(first.rows);
    const parquet = dataFiles(out);
    expect(parquet.length).toBeGreaterThan(0);
    expect(parquet.every((f) => f.endsWith('.parquet'))).toBe(true);
    expect((await verifyAs(dir, out, 'parquet')).problems).toEqual([]);
  });
});
