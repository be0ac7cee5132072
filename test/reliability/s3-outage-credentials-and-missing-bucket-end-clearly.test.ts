/**
 * S3 faults, against a radosgw cluster of this test file's own (the shared test server must keep
 * serving the other test files): the gateway stopped for 10 s in the middle of a run (ridden
 * out by the store's retries), stopped for longer than the retry budget (a clear failure), the
 * answer to a window's completed marker lost after the marker landed (through a proxy: the window
 * failed in the run yet committed, its files kept), wrong credentials, a user without permission
 * on the bucket, a bucket that does not exist.
 * Each ends with a clear error (no stack trace) and the exit code of the policy: 1 for the outage
 * (a later run completes it), 2 for what a person must fix (credentials missing or wrong, no
 * permission, no bucket); and the next run with a working store exports exactly the source's rows.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { verifyDestination } from '../../src/state/verify.js';
import { S3Store } from '../../src/store/s3.js';
import { downloadPrefix } from '../helpers/export.js';
import { freePort } from '../helpers/free-port.js';
import { startS3FaultProxy } from '../helpers/s3-fault-proxy.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import {
  aliceTransactionIds,
  aliceTransactionsJob,
  buildTestCli,
  duplicates,
  readNdjsonExport,
  REPO,
  runCli,
  setDigest,
  writeJob,
  type TestCli,
} from './harness.js';

const exec = promisify(execFile);
const SCRIPT = join(REPO, 'scripts/s3/radosgw.sh');
const KEY = 'reliabilitykey';
const SECRET = 'reliabilitysecret000000000000000000000000';
const BUCKET = 'outage';
const sandbox = useSandbox({ latency: { fixedMs: 15, jitterMs: 15 } });

let cli: TestCli;
const tmp = useTempDir('s3-faults-');
let cluster: string;
let endpoint: string;
let client: S3Client;

beforeAll(async () => {
  cluster = join(tmp.dir, 'cluster');
  const port = await freePort();
  const [built] = await Promise.all([
    buildTestCli(),
    exec('bash', [SCRIPT, 'start', cluster, String(port)], {
      env: { ...process.env, RGW_WATCH_PID: String(process.pid), S3_ACCESS_KEY_ID: KEY, S3_SECRET_ACCESS_KEY: SECRET },
      timeout: 120_000,
    }),
  ]);
  cli = built;
  endpoint = `http://127.0.0.1:${port}`;
  client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: KEY, secretAccessKey: SECRET },
  });
  await client.send(new CreateBucketCommand({ Bucket: BUCKET }));
}, 180_000);

afterAll(async () => {
  client?.destroy();
  await cli?.remove();
  if (cluster) await exec('bash', [SCRIPT, 'stop', cluster]).catch(() => undefined);
});

const env = (over: Record<string, string> = {}) => ({
  S3_ENDPOINT: endpoint,
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: KEY,
  AWS_SECRET_ACCESS_KEY: SECRET,
  ...over,
});

// Windows committed one by one: the gateway goes down with many windows of the run still to commit.
const job = (destination: string) => {
  const j = aliceTransactionsJob(sandbox, 's3faults', '3h', destination);
  return { ...j, output: { ...(j.output as object), batch_windows: 'off' } };
};
const expectedIds = () => aliceTransactionIds(sandbox);

async function countKeys(prefix: string): Promise<number> {
  const page = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return page.KeyCount ?? 0;
}

/** The next run with a working store completes, and the bucket holds exactly the source rows. */
async function nextRunIsExact(jobFile: string, prefix: string): Promise<number> {
  const next = await runCli(cli, ['run', jobFile, '--log-level', 'error', '--json'], { env: env() });
  expect(next.code, next.stderr).toBe(0);
  const local = join(tmp.dir, `download-${prefix}-${Date.now()}`);
  await downloadPrefix(client, BUCKET, prefix, local);
  const got = readNdjsonExport(local).itemIds;
  expect(duplicates(got)).toEqual([]);
  // Which rows differ, and what the next run reported, say more than two digests when this fails.
  const have = new Set(got);
  const want = new Set(expectedIds());
  const missing = [...want].filter((id) => !have.has(id));
  const extra = [...have].filter((id) => !want.has(id));
  expect(
    { missing: missing.slice(0, 5), extra: extra.slice(0, 5) },
    `${missing.length} missing, ${extra.length} extra; next run: ${next.stdout.slice(0, 2000)}`,
  ).toEqual({
    missing: [],
    extra: [],
  });
  expect(setDigest(got)).toBe(setDigest(expectedIds()));
  const store = new S3Store({ bucket: BUCKET, prefix, endpoint, credentials: { accessKeyId: KEY, secretAccessKey: SECRET } });
  expect((await verifyDestination({ store, job: await loadJob(jobFile) })).problems).toEqual([]);
  await store.close();
  return got.length;
}

function clearError(stderr: string): void {
  expect(stderr).toMatch(/^error: /m);
  expect(stderr).not.toMatch(/internal error|\n\s+at \S+ \(/);
  expect(stderr).not.toContain(SECRET);
  // Failed requests are logged without their bodies.
  expect(stderr).not.toContain('"type":"Buffer"');
}

/** The CLI's error line (after the log lines). */
const errorLine = (stderr: string) => /^error: .*$/m.exec(stderr)?.[0] ?? stderr.split('\n')[0];

/**
 * Runs the job and stops the gateway for `downMs` once `after` windows are completed; resolves
 * when the run has ended and the gateway is back.
 */
async function runWithOutage(base: string, jobFile: string, downMs: number, runEnv: Record<string, string>) {
  let downAt = 0;
  let upAt = 0;
  let completedBefore = 0;
  const prefix = `${base.split('/').pop()}/_state/s3faults/completed/`;
  const run = runCli(cli, ['run', jobFile, '--log-level', 'warn', '--json', '--staging-dir', join(base, 'staging')], {
    env: runEnv,
    onSpawn: () => {
      const poll = setInterval(async () => {
        if (downAt > 0) return;
        const n = await countKeys(prefix).catch(() => 0);
        if (n < 4 || downAt > 0) return;
        clearInterval(poll);
        completedBefore = n;
        downAt = Date.now();
        await exec('bash', [SCRIPT, 'gateway-stop', cluster]);
        setTimeout(async () => {
          await exec('bash', [SCRIPT, 'gateway-start', cluster]);
          upAt = Date.now();
        }, downMs);
      }, 50);
    },
  });
  const r = await run;
  while (upAt === 0) await new Promise((res) => setTimeout(res, 50));
  expect(downAt, 'the gateway was stopped during the run').toBeGreaterThan(0);
  return { r, downMs: upAt - downAt, completedBefore };
}

it(
  'the gateway stops for 10 s in the middle of a run: the run rides it out, exit 0, the export is exact',
  { timeout: 180_000 },
  async () => {
    const base = join(tmp.dir, 'blip');
    const jobFile = await writeJob(base, job(`s3://${BUCKET}/blip`));
    const { r, downMs, completedBefore } = await runWithOutage(base, jobFile, 10_000, env());
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const report = JSON.parse(r.stdout) as RunReport;
    expect(report.status).toBe('succeeded');
    expect(report.failed).toEqual([]);
    expect(r.stderr).toMatch(/S3 unavailable; retrying/);
    const local = join(tmp.dir, 'download-blip');
    await downloadPrefix(client, BUCKET, 'blip', local);
    const got = readNdjsonExport(local).itemIds;
    expect(duplicates(got)).toEqual([]);
    expect(setDigest(got)).toBe(setDigest(expectedIds()));
    const store = new S3Store({ bucket: BUCKET, prefix: 'blip', endpoint, credentials: { accessKeyId: KEY, secretAccessKey: SECRET } });
    expect((await verifyDestination({ store, job: await loadJob(jobFile) })).problems).toEqual([]);
    await store.close();
    console.log(
      `[s3] gateway down for ${downMs} ms after ${completedBefore} windows: run exit 0, ${report.windows.done} windows, ${got.length} rows exact`,
    );
  },
);

it(
  'the gateway stays down longer than the retry budget: units fail clearly, exit 1, the next run completes',
  { timeout: 180_000 },
  async () => {
    const base = join(tmp.dir, 'outage');
    const jobFile = await writeJob(base, job(`s3://${BUCKET}/outage`));
    const { r, downMs, completedBefore } = await runWithOutage(base, jobFile, 8_000, env({ INSIGHT_EXPORT_S3_RETRY_BUDGET: '2s' }));
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at \S+ \(/);
    let failedWindows = 0;
    if (r.stdout.trim().startsWith('{')) {
      // The gateway was back before the run ended: the report names the failed windows and the S3 error.
      const report = JSON.parse(r.stdout) as RunReport;
      expect(report.status).toBe('failed');
      expect(report.failed.length).toBeGreaterThan(0);
      for (const f of report.failed) expect(f.error).toMatch(/S3|ECONNREFUSED|socket|unavailable|connect/i);
      failedWindows = report.failed.length;
    } else {
      // Every remaining window failed and the run ended while the gateway was still down:
      // the report itself could not be written, and the CLI says so.
      clearError(r.stderr);
      expect(errorLine(r.stderr)).toMatch(/S3|unavailable|connect/i);
    }
    expect(r.stderr).toMatch(/s3\.retry_budget 2 s/);
    const rows = await nextRunIsExact(jobFile, 'outage');
    console.log(
      `[s3] gateway down for ${downMs} ms (budget 2 s) after ${completedBefore} windows: run exit ${r.code}, ${failedWindows || r.stderr.split('\n').filter((l) => l.includes('unit failed')).length} windows failed` +
        `${failedWindows ? ' (named in the report)' : ` (logged; ${errorLine(r.stderr)})`}; next run exit 0, ${rows} rows exact`,
    );
  },
);

it(
  "an answer the outage lost: a window's completed marker landed though its write failed; the run keeps the window's files, the next run is exact",
  { timeout: 120_000 },
  async () => {
    // The gateway went away after writing the marker and before answering; it refuses the retries.
    // The marker of a window with files (a pending marker written before it): the one whose files are at stake.
    const markers = `/${BUCKET}/lost/_state/s3faults/`;
    const withFiles = new Set<string>();
    const proxy = await startS3FaultProxy(endpoint, (method, path) => {
      if (method !== 'PUT' || !path.startsWith(markers)) return false;
      const place = path.slice(markers.length);
      if (place.startsWith('pending/')) withFiles.add(place.slice('pending/'.length));
      return place.startsWith('completed/') && withFiles.has(place.slice('completed/'.length));
    });
    try {
      const base = join(tmp.dir, 'lost');
      const jobFile = await writeJob(base, job(`s3://${BUCKET}/lost`));
      const r = await runCli(cli, ['run', jobFile, '--log-level', 'error', '--json', '--staging-dir', join(base, 'staging')], {
        env: env({ S3_ENDPOINT: proxy.url, INSIGHT_EXPORT_S3_RETRY_BUDGET: '1s' }),
      });
      expect(proxy.lost, 'a completed marker lost its answer').not.toBeNull();
      expect(proxy.refused).toBeGreaterThan(0);
      expect(r.code, r.stderr.slice(-2000)).toBe(1);
      const report = JSON.parse(r.stdout) as RunReport;
      expect(report.failed).toHaveLength(1);
      expect(report.failed[0]!.error).toMatch(/S3|unavailable/i);
      // The window counts as failed, yet its marker is at the destination: it is committed.
      const key = proxy.lost!.slice(`/${BUCKET}/`.length);
      expect((await client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: key }))).KeyCount).toBe(1);
      const rows = await nextRunIsExact(jobFile, 'lost');
      console.log(
        `[s3] answer lost to ${key.split('/_state/')[1]} (${proxy.refused} retries refused): run exit 1, next run exit 0, ${rows} rows exact`,
      );
    } finally {
      await proxy.close();
    }
  },
);

it('wrong or missing credentials: a clear access error, exit 2, nothing written; the next run completes', { timeout: 60_000 }, async () => {
  const base = join(tmp.dir, 'creds');
  const jobFile = await writeJob(base, job(`s3://${BUCKET}/creds`));
  const r = await runCli(cli, ['run', jobFile, '--log-level', 'error'], {
    env: env({ AWS_SECRET_ACCESS_KEY: 'not-the-secret-0000000000000000000000000' }),
  });
  expect(r.code).toBe(2);
  clearError(r.stderr);
  expect(r.stderr).toMatch(/credential|access|signature|denied|forbidden/i);
  expect(r.stderr).not.toContain('not-the-secret');
  expect(await countKeys('creds/')).toBe(0);
  const missing = await runCli(cli, ['run', jobFile, '--log-level', 'error'], {
    env: { S3_ENDPOINT: endpoint, AWS_REGION: 'us-east-1', AWS_EC2_METADATA_DISABLED: 'true' },
  });
  expect(missing.code).toBe(2);
  clearError(missing.stderr);
  expect(missing.stderr).toMatch(/No S3 credentials found/);
  console.log(
    `[s3] wrong secret -> exit ${r.code}: ${errorLine(r.stderr)}; no credentials -> exit ${missing.code}: ${errorLine(missing.stderr)}`,
  );
  await nextRunIsExact(jobFile, 'creds');
});

it('a user without permission on the bucket: a clear access error, exit 2, nothing written', { timeout: 60_000 }, async () => {
  await exec('radosgw-admin', [
    '-c',
    join(cluster, 'ceph.conf'),
    '-n',
    'client.admin',
    'user',
    'create',
    '--uid',
    'intruder',
    '--display-name',
    'intruder',
    '--access-key',
    'intruderkey',
    '--secret',
    'intrudersecret0000000000000000000000000',
  ]);
  const base = join(tmp.dir, 'perm');
  const jobFile = await writeJob(base, job(`s3://${BUCKET}/perm`));
  const r = await runCli(cli, ['run', jobFile, '--log-level', 'error'], {
    env: env({ AWS_ACCESS_KEY_ID: 'intruderkey', AWS_SECRET_ACCESS_KEY: 'intrudersecret0000000000000000000000000' }),
  });
  expect(r.code).toBe(2);
  clearError(r.stderr);
  expect(r.stderr).not.toContain('intrudersecret');
  expect(r.stderr).toMatch(/denied|permission|forbidden|access/i);
  expect(await countKeys('perm/')).toBe(0);
  console.log(`[s3] no permission -> exit ${r.code}: ${errorLine(r.stderr)}`);
  await nextRunIsExact(jobFile, 'perm');
});

it('a bucket that does not exist: a clear error naming it, exit 2', { timeout: 60_000 }, async () => {
  const base = join(tmp.dir, 'nobucket');
  const jobFile = await writeJob(base, job('s3://no-such-bucket-here/x'));
  const r = await runCli(cli, ['run', jobFile, '--log-level', 'error'], { env: env() });
  expect(r.code).toBe(2);
  clearError(r.stderr);
  expect(r.stderr).toContain('no-such-bucket-here');
  expect(r.stderr).toMatch(/does not exist/);
  console.log(`[s3] missing bucket -> exit ${r.code}: ${errorLine(r.stderr)}`);
});
