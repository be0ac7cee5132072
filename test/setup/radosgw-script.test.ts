/** scripts/s3/radosgw.sh: a second throwaway cluster starts, serves S3 with the test user, and leaves nothing behind. */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3TestConfig } from '../helpers/s3.js';
import { freePort } from '../helpers/free-port.js';

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/s3/radosgw.sh');

function script(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('bash', [SCRIPT, ...args], { env: { ...process.env, ...env }, timeout: 90_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Live processes whose command line names this cluster's config. */
function daemonsOf(dir: string): number[] {
  const conf = path.join(dir, 'ceph.conf');
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((pid) => {
      try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        if (/^State:\s*Z/m.test(status)) return false;
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes(conf);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('scripts/s3/radosgw.sh', () => {
  let base: string;
  beforeAll(async () => {
    // The run's own server must be up first: two clusters starting at once only slow each other.
    await s3TestConfig();
    base = await mkdtemp(path.join(os.tmpdir(), 'rgw-script-'));
  });
  afterAll(async () => {
    await script(['stop', path.join(base, 'a')]);
    await script(['stop', path.join(base, 'b')]);
    await rm(base, { recursive: true, force: true });
  });

  it('start prints the endpoint and credentials, S3 works with them; stop kills every daemon and removes the folder', async () => {
    const dir = path.join(base, 'a');
    const port = await freePort();
    const started = await script(['start', dir, String(port)], { S3_ACCESS_KEY_ID: 'scriptkey', S3_SECRET_ACCESS_KEY: 'scriptsecret' });
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    const vars = Object.fromEntries(
      started.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('=', 2) as [string, string]),
    );
    expect(vars).toMatchObject({
      S3_ENDPOINT: `http://127.0.0.1:${port}`,
      S3_ACCESS_KEY_ID: 'scriptkey',
      S3_SECRET_ACCESS_KEY: 'scriptsecret',
    });
    console.log(`[radosgw.sh] second cluster started in ${vars.RGW_START_MS} ms`);
    expect(daemonsOf(dir).length).toBe(3);
    expect((await script(['status', dir, String(port)])).code).toBe(0);

    const client = new S3Client({
      endpoint: vars.S3_ENDPOINT,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'scriptkey', secretAccessKey: 'scriptsecret' },
    });
    await client.send(new CreateBucketCommand({ Bucket: 'script-check' }));
    const buckets = await client.send(new ListBucketsCommand({}));
    expect(buckets.Buckets?.map((b) => b.Name)).toEqual(['script-check']);
    client.destroy();

    const stopped = await script(['stop', dir]);
    expect(stopped.code).toBe(0);
    expect(existsSync(dir)).toBe(false);
    expect(daemonsOf(dir)).toEqual([]);
    expect((await script(['status', dir, String(port)])).code).not.toBe(0);
  }, 90_000);

  it('with RGW_WATCH_PID the cluster stops by itself when that process ends', async () => {
    const dir = path.join(base, 'b');
    const port = await freePort();
    const watched = spawn('sleep', ['30'], { stdio: 'ignore' });
    const started = await script(['start', dir, String(port)], { RGW_WATCH_PID: String(watched.pid) });
    expect(started.code).toBe(0);
    expect(daemonsOf(dir).length).toBe(3);
    watched.kill('SIGKILL');
    const deadline = Date.now() + 10_000;
    while (existsSync(dir) && Date.now() < deadline) await sleep(100);
    expect(existsSync(dir)).toBe(false);
    expect(daemonsOf(dir)).toEqual([]);
  }, 90_000);

  it('refuses to remove or overwrite a folder it did not create', async () => {
    const precious = path.join(base, 'precious');
    await mkdir(precious);
    await writeFile(path.join(precious, 'keep.txt'), 'keep');
    const stop = await script(['stop', precious]);
    expect(stop.code).not.toBe(0);
    expect(stop.stderr).toMatch(/does not look like a radosgw.sh cluster/);
    const start = await script(['start', precious, String(await freePort())]);
    expect(start.code).not.toBe(0);
    expect(start.stderr).toMatch(/not a radosgw.sh cluster folder/);
    expect(readFileSync(path.join(precious, 'keep.txt'), 'utf8')).toBe('keep');
  });
});
