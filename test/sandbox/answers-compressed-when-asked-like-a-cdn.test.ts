import { describe, expect, it } from 'vitest';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { startSandbox, type Sandbox } from '@insight-export/sandbox';
import { closeAfterEach } from '../helpers/close-after-each.js';

const { servers } = closeAfterEach();

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET with exactly these headers (fetch would add and undo Accept-Encoding itself). */
function get(url: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function sandbox(compress?: boolean): Promise<Sandbox> {
  const s = await startSandbox({ transactions: 1_000, seed: 3, ...(compress === undefined ? {} : { compress }) });
  servers.push(s);
  return s;
}

const pageUrl = (s: Sandbox) => `${s.url}/wallets/${s.data.wallets[0]!.address}/transactions?chain_id=1&limit=100`;

describe('the sandbox compresses as a CDN does', () => {
  it('answers in brotli when accepted, else gzip, else plain; all three are the same JSON', async () => {
    const s = await sandbox();
    const plain = await get(pageUrl(s), {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    const br = await get(pageUrl(s), { 'accept-encoding': 'gzip, deflate, br' });
    const gz = await get(pageUrl(s), { 'accept-encoding': 'gzip, br;q=0' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(plain.body.length / 4);
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);
    expect(JSON.parse(plain.body.toString('utf8')).data).toHaveLength(100);
  });

  it('leaves small bodies and unknown encodings alone', async () => {
    const s = await sandbox();
    const small = await get(`${s.url}/wallets/0x0000000000000000000000000000000000000001/transactions?chain_id=1&limit=1`, {
      'accept-encoding': 'br, gzip',
    });
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(1_000);
    expect(small.headers['content-encoding']).toBeUndefined();
    const other = await get(pageUrl(s), { 'accept-encoding': 'compress' });
    expect(other.headers['content-encoding']).toBeUndefined();
  });

  it('never compresses with compress: false', async () => {
    const s = await sandbox(false);
    const res = await get(pageUrl(s), { 'accept-encoding': 'br, gzip' });
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(res.body.toString('utf8')).data).toHaveLength(100);
  });
});
