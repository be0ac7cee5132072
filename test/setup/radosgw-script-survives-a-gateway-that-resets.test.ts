/**
 * scripts/s3/radosgw.sh asks whether the gateway answers by writing a request on a TCP socket. A
 * gateway just killed (gateway-stop, during the S3 outage tests) can accept a connection and
 * reset it: the write then fails with EPIPE, and must not kill the script with SIGPIPE (which
 * failed the outage test and every test after it).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useTempDir } from '../helpers/temp-dir.js';

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../scripts/s3/radosgw.sh');
const tmp = useTempDir('rgw-reset-');
let server: net.Server;
let port: number;

beforeAll(async () => {
  // Accepts and resets at once; the script waits RGW_PROBE_DELAY before it writes.
  server = net.createServer((socket) => socket.resetAndDestroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

it('status against a port that accepts and resets: "not running", exit 1, not killed by SIGPIPE', async () => {
  await writeFile(path.join(tmp.dir, 'port'), String(port));
  const r = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>((resolve) => {
    execFile('bash', [SCRIPT, 'status', tmp.dir], { env: { ...process.env, RGW_PROBE_DELAY: '0.2' } }, (err, stdout) => {
      const e = err as { code?: number | null; signal?: NodeJS.Signals | null } | null;
      resolve({ code: e ? (e.code ?? null) : 0, signal: e?.signal ?? null, stdout });
    });
  });
  expect(r.signal).toBeNull();
  expect(r.code).toBe(1);
  expect(r.stdout).toContain('not running');
});
