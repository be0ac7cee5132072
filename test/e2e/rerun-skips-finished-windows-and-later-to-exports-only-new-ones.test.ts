/**
 * Issue 3: re-running a finished job sends no data requests and touches no file (the run after
 * the first recounts its windows, one count each, and settles them; the run after that asks
 * nothing); moving `to` forward requests and writes only the new windows, and the whole output is
 * still exactly the sandbox's rows. Local directory and S3 (state lives at the destination in both).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { eventTableForSignature } from '../../src/datasets/events.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plan } from '../../src/plan/index.js';
import type { ProgressEvent } from '../../src/run/export-windows.js';
import {
  downloadPrefix,
  exportJob,
  listFiles,
  readTable,
  startRecordingProxy,
  truthContractEvents,
  truthWalletTransactions,
  unixDay,
  type RecordingProxy,
} from '../helpers/export.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useS3CredentialsInEnv, useTestBucket } from '../helpers/s3.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { completedWindows } from '../helpers/completed-windows.js';
import { LocalStore } from '../../src/store/local.js';

const sandbox = useSandbox({ seed: 42, transactions: 20_000 });
const bucket = useTestBucket('e2e-rerun');

const CHAINS = [1, 8453, 42161];
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const DAY1 = unixDay('2024-02-01');
const DAY3 = unixDay('2024-02-03');
// Before every chain's head minus the safety lag (the service serves nothing later yet).
const LATER = Date.parse('2024-02-04T12:00:00Z') / 1000;

const tmp = useTempDir('e2e-rerun-');
let proxy: RecordingProxy;
// The AWS SDK reads the credentials from the environment (its default chain), as in production.
const s3Env = useS3CredentialsInEnv();

beforeAll(async () => {
  proxy = await startRecordingProxy(sandbox.url);
});

afterAll(async () => {
  await proxy?.close();
});

function susd(chainId: number) {
  return sandbox.data.contracts.find((c) => c.symbol === 'SUSD' && c.chainId === chainId)!;
}

function job(to: string) {
  return {
    name: 'rerun',
    source: { base_url: 'sandbox', chains: CHAINS },
    targets: [
      { wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] },
      { contract: susd(1).address, chains: [1], events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to, chunk: '1d' },
    decode: false,
  };
}

/** Data requests (list routes asking for rows) the proxy saw since `from`, with their lower time bound. */
function dataRequests(from: number): { route: string; gte: number; lt: number }[] {
  return listRequests(from, false);
}

/** Count requests (list routes with `aggregate`: settling, src/run/settle.ts) the proxy saw since `from`. */
function countRequests(from: number): { route: string; gte: number; lt: number }[] {
  return listRequests(from, true);
}

function listRequests(from: number, counts: boolean): { route: string; gte: number; lt: number }[] {
  return proxy.requests.slice(from).flatMap((u) => {
    if (u.searchParams.has('aggregate') !== counts) return [];
    const route = /\/wallets\/[^/]+\/transactions$/.test(u.pathname) ? 'transactions' : /\/events\//.test(u.pathname) ? 'events' : null;
    if (!route) return [];
    return [
      { route, gte: Number(u.searchParams.get('filter_block_timestamp_gte')), lt: Number(u.searchParams.get('filter_block_timestamp_lt')) },
    ];
  });
}

interface Snapshot {
  /** key -> version (local: inode + mtime; S3: ETag + LastModified) */
  files: Map<string, string>;
}

describe.each(['local', 's3'] as const)('a %s destination', (kind) => {
  const prefix = 'rerun-test';
  let dir: string;
  let destination: string;

  beforeAll(() => {
    dir = join(tmp.dir, kind);
    destination = kind === 'local' ? join(dir, 'out') : `s3://${bucket.bucket}/${prefix}`;
  });

  /** Data files and the state of completed windows; reports, last-run and the lease are per-run bookkeeping. */
  const completedState = ['_state/rerun/completed/', '_state/rerun/units/', '_state/rerun/segments/'];
  const dataOnly = (s: Snapshot) => [...s.files].filter(([k]) => !k.startsWith('_state/') || completedState.some((p) => k.startsWith(p)));
  const dataFiles = (s: Snapshot) => [...s.files].filter(([k]) => !k.startsWith('_state/'));
  const store = () => (kind === 'local' ? new LocalStore(join(dir, 'out')) : bucket.store(prefix));

  async function snapshot(): Promise<Snapshot> {
    const files = new Map<string, string>();
    if (kind === 'local') {
      for (const f of listFiles(join(dir, 'out'))) {
        if (f.startsWith('.insight-export-tmp/')) continue;
        const st = statSync(join(dir, 'out', f));
        files.set(f, `${st.ino}:${st.mtimeMs}`);
      }
    } else {
      let token: string | undefined;
      do {
        const page = await bucket.client.send(
          new ListObjectsV2Command({ Bucket: bucket.bucket, Prefix: `${prefix}/`, ContinuationToken: token }),
        );
        for (const o of page.Contents ?? []) files.set(o.Key!.slice(prefix.length + 1), `${o.ETag}:${o.LastModified?.getTime()}`);
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    }
    return { files };
  }

  async function run(to: string) {
    let plan: Plan | undefined;
    const done: ProgressEvent[] = [];
    const before = proxy.requests.length;
    const report = await exportJob({
      job: job(to),
      dir,
      sandbox: { url: proxy.url, explorerUrl: sandbox.explorerUrl },
      destination,
      env: kind === 's3' ? s3Env : {},
      onPlan: (p) => (plan = p),
      onProgress: (e) => e.kind === 'unit-done' && done.push(e),
    });
    return { report, plan: plan!, done, requests: dataRequests(before), counts: countRequests(before) };
  }

  let first: Awaited<ReturnType<typeof run>>;
  let afterFirst: Snapshot;
  let windowsAfterFirst: Awaited<ReturnType<typeof completedWindows>>;

  beforeAll(async () => {
    first = await run('2024-02-03');
    afterFirst = await snapshot();
    windowsAfterFirst = await completedWindows(store(), 'rerun');
  });

  it('the first run exports the two days it asks for', () => {
    expect(first.report.status).toBe('succeeded');
    // 2 days x (3 wallet chains + 1 event chain)
    expect(first.plan.units).toHaveLength(8);
    expect(first.requests.length).toBeGreaterThan(0);
    expect(first.requests.every((r) => r.gte >= DAY1 && r.lt <= DAY3)).toBe(true);
  });

  it('re-running the finished job sends no data request and changes no data file', async () => {
    const again = await run('2024-02-03');
    expect(again.report.status).toBe('succeeded');
    expect(again.plan.units).toHaveLength(0);
    expect(again.report.rows).toBe(0);
    expect(again.report.units_skipped).toBe(again.report.units_total);
    expect(again.requests).toEqual([]);
    // It recounted the first run's windows (within their bounds), found them equal and settled them.
    expect(again.counts.length).toBeGreaterThan(0);
    expect(again.counts.every((r) => r.gte >= DAY1 && r.lt <= DAY3)).toBe(true);
    expect(again.report.settle).toMatchObject({ reexported: 0, settled: first.report.windows.done });
    const third = await run('2024-02-03');
    expect(third.requests).toEqual([]);
    expect(third.counts).toEqual([]);
    const now = await snapshot();
    expect(dataOnly(afterFirst).length).toBeGreaterThan(8);
    expect(dataOnly(now)).toEqual(dataOnly(afterFirst));
  });

  it('moving `to` forward requests and writes only the new windows', async () => {
    const later = await run('2024-02-04T12:00:00Z');
    expect(later.report.status).toBe('succeeded');
    // planned, requested and committed: only windows of 3 February and the morning of the 4th
    expect(later.plan.units).toHaveLength(8);
    expect(later.plan.units.every((u) => u.window.start >= DAY3 && u.window.end <= LATER)).toBe(true);
    expect(later.requests.length).toBeGreaterThan(0);
    expect(later.requests.every((r) => r.gte >= DAY3 && r.lt <= LATER)).toBe(true);
    expect(later.done.every((e) => e.kind === 'unit-done' && e.start >= DAY3)).toBe(true);

    // the first run's files and windows are untouched; the new files are all of the new days
    const now = await snapshot();
    for (const [key, version] of dataFiles(afterFirst)) expect(now.files.get(key), key).toBe(version);
    const windowsNow = new Map((await completedWindows(store(), 'rerun')).map((w) => [w.key, w.record]));
    for (const w of windowsAfterFirst) expect(windowsNow.get(w.key), w.key).toEqual(w.record);
    const added = [...now.files.keys()].filter((k) => !afterFirst.files.has(k) && !k.startsWith('_state/'));
    expect(added.length).toBe(8);
    expect(added.every((k) => /\/date=2024-02-0[34]\//.test(k))).toBe(true);
  });

  it('the output of both runs together is exactly the sandbox rows of the whole range', async () => {
    const root = kind === 'local' ? join(dir, 'out') : join(dir, 'downloaded');
    if (kind === 's3') await downloadPrefix(bucket.client, bucket.bucket, prefix, root);
    const range = { by: 'time' as const, from: DAY1, to: LATER };
    const alice = sandbox.data.wallets[0]!.address;
    const txs = truthWalletTransactions(sandbox.data, alice, CHAINS, range);
    const events = truthContractEvents(sandbox.data, susd(1).address, TRANSFER, [1], range);
    const gotTx = await readTable(root, 'transactions', 'parquet');
    const gotEv = await readTable(root, eventTableForSignature(TRANSFER), 'parquet');
    expect(gotTx.map((r) => r.item_id).sort()).toEqual(txs.map((t) => `${t.chain_id}:${t.hash}:${alice}`).sort());
    expect(gotEv.map((r) => r.item_id).sort()).toEqual(events.map((e) => `${e.chain_id}:${e.transaction_hash}:${e.log_index}`).sort());
  });
});
