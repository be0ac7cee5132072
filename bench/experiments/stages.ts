/**
 * Cost of each per-row stage of the export, on real sandbox pages of the hot wallet, in one
 * process and one thread, so each figure is CPU of that stage alone (µs per row, best of 5):
 *
 *   npx tsx bench/experiments/stages.ts [sandbox transactions, default 300000]
 *
 * decoding of the compressed body (brotli, as the CDN-like server sends it; gzip) -> parse
 * (JSON.parse of the body: what the bare client does) -> normalise -> toRow (incl. decode)
 * -> partition routing -> NDJSON encode -> gzip level 6 / 3 / 1 of the encoded text.
 */
import { promisify } from 'node:util';
import { brotliDecompress, brotliDecompressSync, gunzip, gunzipSync, gzipSync } from 'node:zlib';
import { decodeBody } from '../../src/source/content-encoding.js';
import { cdnCompress } from '@insight-export/sandbox';
import { normaliseListResponse } from '../../src/source/response-records.js';
import { transactionsDataset, type WalletTransactionsTarget } from '../../src/datasets/transactions.js';
import { createNdjsonEncoder, createColumnarConverter } from '../../src/sink/row-values.js';
import { isoDate, type Row } from '../../src/columns/columns.js';
import { renderPartition } from '../../src/sink/partitioning.js';
import type { TransactionRecord } from '../../src/source/records.js';
import { decodingWalletTarget, sandboxPageBodies } from '../sandbox-transaction-rows.js';

const brotliDecompressAsync = promisify(brotliDecompress);
const gunzipAsync = promisify(gunzip);
const { wallet, bodies } = await sandboxPageBodies(Number(process.argv[2] ?? 300_000));

function time<T>(label: string, rowsPerRun: number, fn: () => T): T {
  let best = Infinity;
  let out!: T;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    out = fn();
    best = Math.min(best, performance.now() - t0);
  }
  console.log(`${label.padEnd(40)} ${((best * 1000) / rowsPerRun).toFixed(2).padStart(7)} µs/row`);
  return out;
}

const parsed = bodies.map((b) => JSON.parse(b) as { data: unknown[] });
const rowsTotal = parsed.reduce((n, p) => n + p.data.length, 0);
const bytes = bodies.reduce((n, b) => n + b.length, 0);
console.log(`${bodies.length} pages, ${rowsTotal} rows, ${(bytes / rowsTotal).toFixed(0)} bytes of JSON per row\n`);
const perRow = (label: string, fn: () => unknown) => time(label, rowsTotal, fn);

const br = await Promise.all(bodies.map((b) => cdnCompress(Buffer.from(b), 'br')));
const gz = await Promise.all(bodies.map((b) => cdnCompress(Buffer.from(b), 'gzip')));
const wire = (zs: Buffer[]) => (zs.reduce((n, z) => n + z.length, 0) / rowsTotal).toFixed(0);
console.log(`bytes on the wire per row: brotli ${wire(br)}, gzip ${wire(gz)}`);
perRow('brotli decode, one call on the main thread', () => br.map((z) => brotliDecompressSync(z)));
/** CPU of every thread (zlib's pool too) per row of an async decode; best of 5. */
async function cpuPerRow(label: string, fn: () => Promise<unknown>): Promise<void> {
  let best = Infinity;
  for (let i = 0; i < 5; i++) {
    const t0 = process.cpuUsage();
    await fn();
    const used = process.cpuUsage(t0);
    best = Math.min(best, used.user + used.system);
  }
  console.log(`${label.padEnd(40)} ${(best / rowsTotal).toFixed(2).padStart(7)} µs/row (CPU, all threads)`);
}
for (const [name, zs, coding] of [
  ['brotli', br, 'br'],
  ['gzip', gz, 'gzip'],
] as const) {
  await cpuPerRow(`${name} decode, the client's (thread pool)`, async () => {
    for (const z of zs) await decodeBody(z, [coding]);
  });
  await cpuPerRow(`${name} decode, zlib's 16 KiB chunks`, async () => {
    for (const z of zs) await (coding === 'br' ? brotliDecompressAsync : gunzipAsync)(z, { chunkSize: 16 << 10 });
  });
}
perRow('gzip decode', () => gz.map((z) => gunzipSync(z)));
perRow('JSON.parse (the limit)', () => bodies.map((b) => JSON.parse(b)));
const records = perRow('JSON.parse + normalise', () =>
  bodies.flatMap((b) => normaliseListResponse(JSON.parse(b), 'u', 'transactions', false).data),
) as TransactionRecord[];
const target = decodingWalletTarget(wallet);
const plain: WalletTransactionsTarget = { ...target, decoder: undefined };
perRow('toRow without decoder', () => records.map((r) => transactionsDataset.toRow(r, plain)));
const rows = perRow('toRow with decoder', () => records.map((r) => transactionsDataset.toRow(r, target))) as Row[];
perRow('  decoder alone', () => records.map((r) => target.decoder!.decode(r)));
perRow('partition of each row', () =>
  rows.map((row) =>
    renderPartition('{dataset}/chain_id={chain_id}/date={date}', {
      dataset: 'transactions',
      chain_id: 1,
      date: isoDate(row.block_timestamp as number),
    }),
  ),
);
const columns = transactionsDataset.columns(target);
const encode = createNdjsonEncoder(columns);
const text = perRow('NDJSON encode (pages of 1000)', () => {
  let out = '';
  for (let i = 0; i < rows.length; i += 1000) out += encode(rows.slice(i, i + 1000), i);
  return out;
}) as string;
console.log(`${(text.length / rows.length).toFixed(0)} bytes of NDJSON per row`);
const convert = createColumnarConverter(columns);
perRow('columnar convert (hyparquet)', () => {
  for (let i = 0; i < rows.length; i += 1000) convert(rows.slice(i, i + 1000), i);
});
const buf = Buffer.from(text);
for (const level of [6, 3, 1]) {
  const z = perRow(`gzip level ${level}`, () => gzipSync(buf, { level })) as Buffer;
  console.log(`  ratio ${(z.length / buf.length).toFixed(3)}`);
}
