/**
 * Reorganisations deeper than the safety lag: after an export up to a fixed block and then
 * incrementally to `latest` (so the last aligned window exists as two pieces), the source changes
 * its most recent blocks (new block hashes, some transactions gone). A plain run keeps the stale
 * rows; `run --rewind <blocks>` exports the most recent windows again, replacing their files and
 * both pieces, and the destination then equals the changed source exactly. A duration on a
 * block-windowed job is refused (exit 2).
 */
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import type { TransactionRecord } from '../../src/source/records.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { listFiles } from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { runCli as runInProcess } from '../helpers/cli-in-process.js';
import { duplicates, writeJob } from './harness.js';

const sandbox = useSandbox({});
const tmp = useTempDir('rewind-');
// The CLI runs in this process (with its log lines in stderr): what is tested is what --rewind exports again, not the process.
const runCli = (argv: string[]) => runInProcess(argv, { logs: true });
let proxy: Server;
let proxyUrl: string;
/** Blocks from here on are "reorganised" by the proxy (null: the source as it is). */
let reorgFrom: number | null = null;

const reorgHash = (hash: string) => `0x${'ee'.repeat(4)}${hash.slice(10)}`;
/** A transaction the reorganisation removed (about a quarter of those in the reorganised blocks). */
const dropped = (t: { hash: string }) => /[0-3]$/.test(t.hash);

function reorganise(rows: TransactionRecord[]): TransactionRecord[] {
  if (reorgFrom === null) return rows;
  const from = reorgFrom;
  return rows
    .filter((t) => t.block_number < from || !dropped(t))
    .map((t) => (t.block_number >= from ? { ...t, block_hash: reorgHash(t.block_hash) } : t));
}

beforeAll(async () => {
  // A proxy in front of the sandbox that rewrites list pages as the reorganised chain would answer.
  proxy = createServer(async (req, res) => {
    const upstream = await fetch(`${sandbox.url}${req.url!.replace(/^\/insights\/v1/, '')}`, { headers: { accept: 'application/json' } });
    let body = await upstream.text();
    if (upstream.ok && /\/transactions(\?|$)/.test(req.url!)) {
      const json = JSON.parse(body) as { data?: TransactionRecord[] };
      // Windows here hold far less than a page, so dropping rows never shortens a full page.
      if (json.data) json.data = reorganise(json.data);
      body = JSON.stringify(json);
    }
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  const addr = proxy.address();
  proxyUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/insights/v1`;
});
afterAll(async () => {
  await new Promise((r) => proxy?.close(r));
});

it('--rewind replaces the reorganised windows; a plain run does not', { timeout: 120_000 }, async () => {
  const chain = sandbox.data.chain(1)!;
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const base = join(tmp.dir, 'job');
  const out = join(base, 'out');
  const chunk = 2000;
  const lag = 10;
  const job = (to: number | 'latest') => ({
    name: 'reorg',
    source: { base_url: proxyUrl, chains: [1] },
    targets: [{ wallet: alice, datasets: ['transactions'] }],
    range: { by: 'block', from: chain.firstBlock, to, chunk, ...(to === 'latest' ? { safety_lag: lag } : {}) },
    output: { format: 'ndjson', destination: out },
  });
  const headEnd = chain.headBlock - lag + 1;
  // A first run up to a block in the middle of the last aligned window, then incrementally to latest.
  const middle = Math.floor(headEnd / chunk) * chunk - chunk / 2;
  const flags = ['--log-level', 'warn', '--json'];
  const first = await runCli(['run', await writeJob(base, job(middle)), ...flags]);
  expect(first.code, first.stderr).toBe(0);
  const jobFile = await writeJob(base, job('latest'));
  const second = await runCli(['run', jobFile, ...flags]);
  expect(second.code, second.stderr).toBe(0);
  const store = new LocalStore(out);
  const before = await verifyDestination({ store, job: await loadJob(jobFile) });
  expect(before.problems).toEqual([]);

  // The chain reorganises its blocks from 3000 below the exported head: deeper than the safety lag.
  reorgFrom = headEnd - 3000;
  const truthRows = (): Map<string, string> =>
    new Map(
      reorganise(
        sandbox.data.allWalletTransactions(
          alice,
          sandbox.data.parseTransactionsQuery(`chain_id=1&filter_block_number_gte=${chain.firstBlock}&filter_block_number_lt=${headEnd}`),
        ),
      ).map((t) => [`1:${t.hash}:${alice}`, t.block_hash]),
    );
  const expected = truthRows();
  const plain = await runCli(['run', jobFile, ...flags]);
  expect(plain.code, plain.stderr).toBe(0);
  expect((JSON.parse(plain.stdout) as RunReport).windows.planned).toBe(0);
  const stale = await readRows(out);
  expect(stale).not.toEqual(expected);

  const rewound = await runCli(['run', jobFile, ...flags, '--rewind', '5000']);
  expect(rewound.code, rewound.stderr).toBe(0);
  const report = JSON.parse(rewound.stdout) as RunReport;
  const got = await readRows(out);
  expect(got.size).toBe(expected.size);
  expect(got).toEqual(expected);
  const after = await verifyDestination({ store, job: await loadJob(jobFile) });
  expect(after.problems).toEqual([]);
  // The two pieces of the last aligned window were replaced by one window: verify counts windows on
  // the chunk grid, each once (a window exported in two pieces was already one), so the count stays.
  const windows = after.units[0]!;
  expect(windows.windows_completed).toBe(before.units[0]!.windows_completed);
  expect(windows.windows_missing).toBe(0);
  const changed = [...expected].filter(([id, hash]) => stale.get(id) !== hash).length;
  const removed = [...stale.keys()].filter((id) => !expected.has(id)).length;
  console.log(
    `[rewind] reorganised from block ${reorgFrom} (head ${chain.headBlock}, lag ${lag}): plain run kept ${changed} stale block hashes and ${removed} removed rows; ` +
      `--rewind 5000 re-exported ${report.windows.done} windows (${report.rows} rows), destination equals the changed source (${got.size} rows), verify clean`,
  );

  const wrongAxis = await runCli(['run', jobFile, '--rewind', '6h']);
  expect(wrongAxis.code).toBe(2);
  expect(wrongAxis.stderr).toMatch(/--rewind 6h is a duration but the job's windows are by block/);
  reorgFrom = null;
});

/** item_id -> block_hash of every exported row (and no item_id twice). */
async function readRows(out: string): Promise<Map<string, string>> {
  const rows = new Map<string, string>();
  const ids: string[] = [];
  for (const rel of listFiles(out)) {
    if (!rel.endsWith('.ndjson.gz') || rel.startsWith('_state/')) continue;
    for (const line of gunzipSync(await readFile(join(out, rel)))
      .toString('utf8')
      .split('\n')) {
      if (!line) continue;
      const r = JSON.parse(line) as { item_id: string; block_hash: string };
      ids.push(r.item_id);
      rows.set(r.item_id, r.block_hash);
    }
  }
  expect(duplicates(ids)).toEqual([]);
  return rows;
}
