/**
 * Concurrent runs: two runs of the same job started together (local directory and S3) — one
 * exports, the other exits 75 with a message naming the holder and writes nothing; the result is
 * exact. A lease held by a live run elsewhere blocks until it expires; a lease left by a killed
 * run on this machine is taken over at once.
 */
import { mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { leaseKey, parseLease } from '../../src/state/lease.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import type { ObjectStore } from '../../src/store/store.js';
import { downloadPrefix } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { s3TestEnv, useTestBucket } from '../helpers/s3.js';
import {
  aliceTransactionIds,
  aliceTransactionsJob,
  duplicates,
  readNdjsonExport,
  runCli,
  setDigest,
  writeJob,
  useTestCli,
  type CliResult,
} from './harness.js';

const sandbox = useSandbox({ latency: { fixedMs: 5, jitterMs: 10 } });
const bucket = useTestBucket('concurrent');

const work = useTestCli('concurrent-');

const job = (destination: string) => aliceTransactionsJob(sandbox, 'together', '12h', destination);
const expectedIds = () => aliceTransactionIds(sandbox);

function checkPair(a: CliResult, b: CliResult): { winner: CliResult; loser: CliResult } {
  const codes = [a.code, b.code].sort();
  expect(codes, `${a.stderr}\n---\n${b.stderr}`).toEqual([ExitCode.ok, ExitCode.busy]);
  const [winner, loser] = a.code === 0 ? [a, b] : [b, a];
  expect(loser.stderr).toMatch(/Another run of this job is in progress \(run \S+ on \S+:\d+\); nothing was written/);
  expect(loser.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(loser.stdout).toBe('');
  const report = JSON.parse(winner.stdout) as RunReport;
  expect(report.status).toBe('succeeded');
  return { winner, loser };
}

describe('two runs of one job started together', () => {
  it('local directory: one exports, the other exits 75 and writes nothing', { timeout: 120_000 }, async () => {
    const base = join(work.dir, 'local');
    const jobFile = await writeJob(base, job(join(base, 'out')));
    const rounds = 2;
    for (let round = 0; round < rounds; round++) {
      // Each round starts from scratch so that both runs have everything to do.
      await rm(join(base, 'out'), { recursive: true, force: true });
      const [a, b] = await Promise.all(
        [0, 1].map((i) =>
          runCli(work.cli, ['run', jobFile, '--json', '--log-level', 'error', '--staging-dir', join(base, `staging-${i}`)]),
        ),
      );
      const { winner } = checkPair(a!, b!);
      const got = readNdjsonExport(join(base, 'out')).itemIds;
      expect(duplicates(got)).toEqual([]);
      expect(setDigest(got)).toBe(setDigest(expectedIds()));
      const reports = JSON.parse(await readFile(join(base, 'out/_state/together/last-run.json'), 'utf8')) as RunReport;
      expect(reports.run_id).toBe((JSON.parse(winner.stdout) as RunReport).run_id);
      expect((await verifyDestination({ store: new LocalStore(join(base, 'out')), job: await loadJob(jobFile) })).problems).toEqual([]);
    }
    console.log(
      `[concurrent] local: ${rounds} rounds of two simultaneous runs: 1 exported, 1 refused (exit 75) each round; ${expectedIds().length} rows exact`,
    );
  });

  it('S3: one exports, the other exits 75 and writes nothing', { timeout: 120_000 }, async () => {
    const base = join(work.dir, 's3');
    const destination = `s3://${bucket.bucket}/together`;
    const jobFile = await writeJob(base, job(destination));
    const env = await s3TestEnv();
    const [a, b] = await Promise.all(
      [0, 1].map((i) =>
        runCli(work.cli, ['run', jobFile, '--json', '--log-level', 'error', '--staging-dir', join(base, `staging-${i}`)], { env }),
      ),
    );
    checkPair(a!, b!);
    const local = join(base, 'download');
    await downloadPrefix(bucket.client, bucket.bucket, 'together', local);
    const got = readNdjsonExport(local).itemIds;
    expect(duplicates(got)).toEqual([]);
    expect(setDigest(got)).toBe(setDigest(expectedIds()));
    const lease = parseLease(await readFile(join(local, '_state/together/lease.json')))!;
    expect(lease.released).toBe(true);
    console.log(`[concurrent] S3: two simultaneous runs: 1 exported, 1 refused (exit 75); ${got.length} rows exact`);
  });
});

describe('a lease someone else holds', () => {
  async function writeLease(store: ObjectStore, record: Record<string, unknown>): Promise<void> {
    await store.put(leaseKey('together'), JSON.stringify(record));
  }

  it('blocks while a run on another machine holds it, and is taken over once it has expired', { timeout: 60_000 }, async () => {
    const base = join(work.dir, 'remote-holder');
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(out));
    await mkdir(out, { recursive: true });
    const store = new LocalStore(out);
    const now = Date.now();
    const remote = {
      holder: 'batch-7:41',
      run_id: 'remote-run',
      host: 'batch-7',
      pid: 41,
      boot_id: 'other',
      acquired_at: new Date(now).toISOString(),
      renewed_at: new Date(now).toISOString(),
    };
    await writeLease(store, { ...remote, expires_at: new Date(now + 600_000).toISOString() });
    const blocked = await runCli(work.cli, ['run', jobFile, '--log-level', 'error']);
    expect(blocked.code).toBe(ExitCode.busy);
    expect(blocked.stderr).toContain('run remote-run on batch-7:41');
    expect(blocked.stderr).toMatch(/held until .*Z/);
    // Only the lease exists: nothing else was written.
    const written: string[] = [];
    for await (const o of store.list('')) written.push(o.key);
    expect(written).toEqual(['_state/together/lease.json']);

    // The remote run crashed: its lease expires and the next run takes over.
    await writeLease(store, { ...remote, expires_at: new Date(Date.now() - 1000).toISOString() });
    const taken = await runCli(work.cli, ['run', jobFile, '--log-level', 'warn']);
    expect(taken.code, taken.stderr).toBe(0);
    expect(taken.stderr).toMatch(/taking over the lease of a run that crashed or stalled/);
    expect(setDigest(readNdjsonExport(out).itemIds)).toBe(setDigest(expectedIds()));
  });

  it('left by a killed run on this machine is taken over at once', { timeout: 60_000 }, async () => {
    const base = join(work.dir, 'killed-holder');
    const out = join(base, 'out');
    const jobFile = await writeJob(base, job(out));
    // Killed right after its first state write: it holds the lease (TTL 120 s) and is gone.
    const killed = await runCli(work.cli, ['run', jobFile, '--log-level', 'error'], { env: { INSIGHT_TEST_CRASH: 'state:1' } });
    expect(killed.signal).toBe('SIGKILL');
    const held = parseLease(await readFile(join(out, '_state/together/lease.json')))!;
    expect(Date.parse(held.expires_at)).toBeGreaterThan(Date.now() + 60_000);
    const t0 = Date.now();
    const next = await runCli(work.cli, ['run', jobFile, '--log-level', 'warn']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toContain(`"holder":"${held.holder}"`);
    expect(setDigest(readNdjsonExport(out).itemIds)).toBe(setDigest(expectedIds()));
    console.log(
      `[concurrent] lease of a SIGKILLed run (valid ${Math.round((Date.parse(held.expires_at) - t0) / 1000)} s more) taken over at once; run took ${Date.now() - t0} ms`,
    );
  });
});
