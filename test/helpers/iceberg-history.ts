/**
 * What the tests of expire-snapshots and remove-orphan-files share: a sandbox wallet job, its
 * table as a Parquet export reads it (the rows every snapshot must read), and `verify` run as a
 * user runs it on the Iceberg destination (local, or S3 with the test server's endpoint).
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import { resolveConfig } from '../../src/config/index.js';
import type { Sandbox } from '@insight-export/sandbox';
import type { VerifyReport } from '../../src/state/verify.js';
import { runCli } from './cli-in-process.js';
import { exportJob, readTable, type CanonRow } from './export.js';

export const DAY = 86_400_000;
export const TABLE = 'transactions';

/** output.snapshot_retention as a job that sets none resolves it. */
export const defaultRetentionMs = () => resolveConfig({ env: {}, configFile: null }).output.snapshotRetentionMs;

/** alice.eth's transactions on `chains`, by day from 2024-02-01 to `to`. */
export function walletJob(name: string, to = '2024-02-03', chains = [1, 8453]) {
  return {
    name,
    source: { base_url: 'sandbox', chains },
    targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }],
    range: { from: '2024-02-01', to, chunk: '1d' },
  };
}

/** The rows of the job's transactions table, from a Parquet export of it into `dir`. */
export async function parquetRows(job: Record<string, unknown>, dir: string, sandbox: Sandbox): Promise<CanonRow[]> {
  const r = await exportJob({ job, dir, sandbox, destination: join(dir, 'out'), flags: { format: 'parquet' } });
  expect(r.status).toBe('succeeded');
  return readTable(join(dir, 'out'), TABLE, 'parquet');
}

/** `insight-export verify <jobFile> --format iceberg --json` on `destination` (s3Env: the test server's, for an s3:// one). */
export async function verifyIceberg(o: {
  jobFile: string;
  destination: string;
  sandbox: Sandbox;
  s3Env?: Readonly<Record<string, string>> | undefined;
}): Promise<{ code: number; report: VerifyReport }> {
  const s3 = o.destination.startsWith('s3://') ? ['--s3-endpoint', o.s3Env!.S3_ENDPOINT!, '--region', o.s3Env!.AWS_REGION!] : [];
  const r = await runCli([
    'verify',
    o.jobFile,
    '--destination',
    o.destination,
    '--format',
    'iceberg',
    '--base-url',
    o.sandbox.url,
    '--json',
    ...s3,
  ]);
  return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport };
}
