/**
 * Throughput of response normalisation on 1000-row pages (not a test: run it by hand).
 *   npx tsx test/source/measure-normalise-throughput.ts [pages]
 * Prints rows/s for JSON.parse alone, normalise alone, and both, for transactions and events.
 */
import { normaliseListResponse } from '../../src/source/response-records.js';
import { wireEvent, wireMeta, wireTransaction } from './fixtures.js';

const pages = Number(process.argv[2] ?? 200);
const ROWS = 1000;
const URL = 'http://127.0.0.1/insights/v1/x';

function pageText(kind: 'transactions' | 'events', p: number): string {
  const data = Array.from({ length: ROWS }, (_, i) => (kind === 'transactions' ? wireTransaction(p * ROWS + i) : wireEvent(p * ROWS + i)));
  return JSON.stringify({ meta: wireMeta({ limit_per_chain: ROWS, total_items: ROWS }), data, aggregations: null });
}

function measure(kind: 'transactions' | 'events'): void {
  // 10 distinct pages, cycled, so the engine cannot specialise on one document.
  const texts = Array.from({ length: 10 }, (_, p) => pageText(kind, p));
  const parsed = texts.map((t) => JSON.parse(t) as unknown);
  const bytes = texts[0]!.length;
  // Warm-up.
  for (let i = 0; i < 20; i++) normaliseListResponse(JSON.parse(texts[i % 10]!), URL, kind as 'events', false);

  let t0 = performance.now();
  for (let i = 0; i < pages; i++) JSON.parse(texts[i % 10]!);
  const parseMs = performance.now() - t0;

  t0 = performance.now();
  let check = 0;
  for (let i = 0; i < pages; i++) check += normaliseListResponse(parsed[i % 10], URL, kind as 'events', false).data.length;
  const normMs = performance.now() - t0;

  t0 = performance.now();
  for (let i = 0; i < pages; i++) check += normaliseListResponse(JSON.parse(texts[i % 10]!), URL, kind as 'events', false).data.length;
  const bothMs = performance.now() - t0;

  if (check !== 2 * pages * ROWS) throw new Error('row count mismatch');
  const rps = (ms: number) => Math.round((pages * ROWS) / (ms / 1000)).toLocaleString('en-US');
  console.log(
    `${kind.padEnd(12)} page ${(bytes / 1024).toFixed(0)} KiB | JSON.parse ${rps(parseMs)} rows/s | normalise ${rps(normMs)} rows/s | parse+normalise ${rps(bothMs)} rows/s`,
  );
}

console.log(`node ${process.version}, ${pages} pages x ${ROWS} rows`);
measure('transactions');
measure('events');
