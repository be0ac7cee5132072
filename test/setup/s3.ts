/**
 * Vitest globalSetup: one real S3 server (Ceph radosgw) for the whole test run.
 *
 * - S3_ENDPOINT (+ S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, optional S3_REGION) set: that server
 *   is used, nothing is started.
 * - Otherwise scripts/s3/radosgw.sh starts a throwaway cluster on a free loopback port. Missing
 *   Ceph packages are installed with apt when running as root; when that is impossible the run
 *   FAILS with what to install: S3 tests are never skipped.
 *
 * The start (1-2 s) runs in the background while vitest starts its workers; test/helpers/s3.ts
 * waits for it (readyFile). Tests get the endpoint and credentials with inject('s3') through
 * that helper. Teardown stops the cluster; a watchdog in the script stops it too if this process
 * dies without a teardown.
 */
import { execFile, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync } from 'node:fs';
import { rm, writeFile, rename } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

export interface S3TestServer {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** JSON written when the background start has finished ({ ok, error?, startMs? }); null = ready now. */
  readyFile: string | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    s3: S3TestServer;
  }
}

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(REPO, 'scripts/s3/radosgw.sh');
const BINARIES = ['radosgw', 'radosgw-admin', 'ceph-mon', 'ceph-osd', 'ceph', 'monmaptool', 'ceph-authtool'];
const PACKAGES = ['radosgw', 'ceph-mon', 'ceph-osd', 'ceph-common'];
/** The fixed test pair the script creates (any value works; these are not secrets). */
const ACCESS_KEY_ID = 'insightexporttestkey';
const SECRET_ACCESS_KEY = 'insightexporttestsecret0000000000000000';

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const fromEnv = serverFromEnv();
  if (fromEnv) {
    project.provide('s3', fromEnv);
    return undefined;
  }

  ensureCephInstalled();

  const port = await freePort();
  const base = mkdtempSync(path.join(os.tmpdir(), 'insight-export-rgw-'));
  const dir = path.join(base, 'cluster');
  const readyFile = path.join(base, 'ready.json');
  project.provide('s3', {
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    accessKeyId: ACCESS_KEY_ID,
    secretAccessKey: SECRET_ACCESS_KEY,
    readyFile,
  });

  const started = Date.now();
  const start = run(SCRIPT, ['start', dir, String(port)], {
    RGW_WATCH_PID: String(process.pid),
    S3_ACCESS_KEY_ID: ACCESS_KEY_ID,
    S3_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY,
  }).then(
    async (out) => {
      const startMs = Number(/RGW_START_MS=(\d+)/.exec(out.stdout)?.[1] ?? Date.now() - started);
      await writeAtomically(readyFile, JSON.stringify({ ok: true, startMs }));
      return true;
    },
    async (err: Error & { stderr?: string }) => {
      const error = `radosgw did not start (${SCRIPT} start ${dir} ${port}): ${(err.stderr || err.message).trim()}`;
      await writeAtomically(readyFile, JSON.stringify({ ok: false, error }));
      return false;
    },
  );

  return async () => {
    const ok = await start;
    try {
      await run(SCRIPT, ['stop', dir, String(port)], {});
    } catch (err) {
      console.warn(`[s3 setup] stopping radosgw failed: ${(err as Error).message}`);
    }
    await rm(base, { recursive: true, force: true });
    if (!ok) console.warn('[s3 setup] radosgw had failed to start: S3 tests of this run failed with its error');
  };
}

function serverFromEnv(): S3TestServer | null {
  const endpoint = process.env.S3_ENDPOINT;
  if (!endpoint) return null;
  const accessKeyId = process.env.S3_ACCESS_KEY_ID ?? process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = process.env.S3_SECRET_ACCESS_KEY ?? process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error(
      'S3_ENDPOINT is set but S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) are not: ' +
        'set them, or unset S3_ENDPOINT to let the tests start their own radosgw.',
    );
  }
  return {
    endpoint,
    region: process.env.S3_REGION ?? process.env.AWS_REGION ?? 'us-east-1',
    accessKeyId,
    secretAccessKey,
    readyFile: null,
  };
}

function ensureCephInstalled(): void {
  if (missingBinaries().length === 0) return;
  const install = `apt-get update && apt-get install -y --no-install-recommends ${PACKAGES.join(' ')}`;
  if (process.getuid?.() !== 0) {
    throw new Error(
      `S3 tests need Ceph radosgw (missing: ${missingBinaries().join(', ')}). Install it with:\n  sudo ${install}\n` +
        'or point the tests at an S3 server: S3_ENDPOINT, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY.',
    );
  }
  console.error(`[s3 setup] Ceph radosgw is missing: installing it (about 40 s): ${install}`);
  const t0 = Date.now();
  const res = spawnSync(
    'bash',
    [
      '-c',
      `apt-get -o DPkg::Lock::Timeout=300 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends ${PACKAGES.join(' ')}`,
    ],
    { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const still = missingBinaries();
  if (res.status !== 0 || still.length > 0) {
    throw new Error(
      `Installing Ceph radosgw for the S3 tests failed (exit ${res.status}; missing: ${still.join(', ') || 'none'}).\n` +
        `${(res.stderr || res.stdout || '').trim().split('\n').slice(-15).join('\n')}\n` +
        `Install it by hand: ${install}\nor point the tests at an S3 server: S3_ENDPOINT, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY.`,
    );
  }
  console.error(`[s3 setup] installed in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

function missingBinaries(): string[] {
  const dirs = (process.env.PATH ?? '/usr/bin:/bin').split(':').concat(['/usr/bin', '/usr/sbin']);
  return BINARIES.filter(
    (b) =>
      !dirs.some((d) => {
        try {
          accessSync(path.join(d, b), constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }),
  );
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function run(cmd: string, args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [cmd, ...args],
      { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 8 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err) reject(Object.assign(err, { stderr }) as Error);
        else resolve({ stdout, stderr });
      },
    );
  });
}

async function writeAtomically(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text);
  await rename(`${file}.tmp`, file);
}
