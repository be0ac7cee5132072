/**
 * Issue 34.3: `insight-export expire-snapshots <job>` and `remove-orphan-files <job>` as commands:
 * the retention from --snapshot-retention, --dry-run and --json, a summary otherwise; each waits
 * for no run (a held lease: exit 75, nothing deleted); expire-snapshots refuses a job that does not
 * write Iceberg tables with exit 2, naming the format (remove-orphan-files takes every format).
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { ExpireSnapshotsReport } from '../../src/iceberg/expire-snapshots.js';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import type { RemoveOrphanFilesReport } from '../../src/iceberg/remove-orphan-files.js';
import { acquireLease } from '../../src/state/lease.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli } from '../helpers/cli-in-process.js';
import { exportJob } from '../helpers/export.js';
import { TABLE, walletJob } from '../helpers/iceberg-history.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 45, transactions: 1_000 });
const tmp = useTempDir('iceberg-history-cli-');
const job = { ...walletJob('historycli', '2024-02-03', [1]), output: { format: 'iceberg' } };
const out = () => join(tmp.dir, 'out');
const jobFile = () => join(tmp.dir, 'job.yaml');
const cli = (...args: string[]) => runCli([...args, '--destination', out(), '--log-level', 'silent']);
const store = () => new LocalStore(out());

describe('on an iceberg export', () => {
  beforeAll(async () => {
    for (const force of [false, true])
      expect((await exportJob({ job, dir: tmp.dir, sandbox, destination: out(), force })).status).toBe('succeeded');
    expect((await readCurrentVersion(store(), TABLE))!.meta.snapshots).toHaveLength(2);
  });

  it('a held lease stops either command with exit 75 before it changes anything', async () => {
    const lease = await acquireLease(store(), job.name, { runId: 'another-run' });
    try {
      for (const command of ['expire-snapshots', 'remove-orphan-files']) {
        const r = await cli(command, jobFile(), '--snapshot-retention', '1ms');
        expect(r.code, command).toBe(75);
        expect(r.stderr).toContain('Another run of this job is in progress');
      }
      expect((await readCurrentVersion(store(), TABLE))!.meta.snapshots).toHaveLength(2);
    } finally {
      await lease.release();
    }
  });

  it('expire-snapshots --dry-run --json reports what would expire; the command then expires it and prints a summary', async () => {
    const dry = await cli('expire-snapshots', jobFile(), '--snapshot-retention', '1ms', '--dry-run', '--json');
    expect(dry.code, dry.stderr).toBe(0);
    const planned = JSON.parse(dry.stdout) as ExpireSnapshotsReport & { job: string };
    expect(planned).toMatchObject({ job: job.name, dry_run: true, retention_ms: 1 });
    const [first] = (await readCurrentVersion(store(), TABLE))!.meta.snapshots;
    expect(planned.tables[0]!.expired_snapshots).toEqual([first!['snapshot-id']]);
    expect((await readCurrentVersion(store(), TABLE))!.version).toBe(2);

    const done = await cli('expire-snapshots', jobFile(), '--snapshot-retention', '1ms');
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(/^expired: job historycli, snapshots committed before /);
    expect(done.stdout).toContain(`${TABLE}: 1 snapshots expired, 1 kept (${TABLE}/metadata/v3.metadata.json); deleted `);
    const current = (await readCurrentVersion(store(), TABLE))!;
    expect(current.version).toBe(3);
    expect(current.meta.snapshots).toHaveLength(1);
    for (const k of planned.tables[0]!.deleted.data_files) expect(await store().head(k), k).toBeNull();
  });

  it('remove-orphan-files --json removes an unnamed file older than the retention; the default retention keeps it', async () => {
    const orphan = `${TABLE}/metadata/${randomUUID()}-m0.avro`;
    await store().put(orphan, 'left by a crashed commit');
    const kept = await cli('remove-orphan-files', jobFile(), '--json');
    expect(kept.code, kept.stderr).toBe(0);
    expect((JSON.parse(kept.stdout) as RemoveOrphanFilesReport).tables[0]).toMatchObject({ deleted: [], too_young: 1 });
    expect(await store().head(orphan)).not.toBeNull();

    const removed = await cli('remove-orphan-files', jobFile(), '--snapshot-retention', '1ms', '--json');
    expect(removed.code, removed.stderr).toBe(0);
    expect((JSON.parse(removed.stdout) as RemoveOrphanFilesReport).tables[0]!.deleted).toEqual([orphan]);
    expect(await store().head(orphan)).toBeNull();
  });
});

it('expire-snapshots refuses a job that does not write iceberg tables, with exit 2 naming the format; remove-orphan-files takes it', async () => {
  const file = join(tmp.dir, 'parquet.yaml');
  await writeFile(file, stringify({ ...job, name: 'parquetjob', output: { format: 'parquet', destination: join(tmp.dir, 'pq') } }));
  const r = await runCli(['expire-snapshots', file]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('expire-snapshots works on Iceberg tables only');
  expect(r.stderr).toContain('writes output.format parquet');
  // Other formats have data files no state names too (a crash, a lost _state/): test/state/remove-orphan-files-*.
  const removed = await runCli(['remove-orphan-files', file]);
  expect(removed.code, removed.stderr).toBe(0);
  expect(removed.stdout).toContain('removed: job parquetjob, 0 of its 0 data files that no completed window or pending commit names');
});
