/**
 * N worker processes of one job, started at once with --shard i/N (as the pods of a Kubernetes
 * Indexed Job or the children of an AWS Batch array job would be), against one sandbox and a real
 * S3 server (radosgw). Together they must export exactly the unsharded plan: every window once, by
 * the shard the recorded split gives it, every source row once, and state that a later run reads as complete.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadJob } from '../../src/job/index.js';
import { ownerOf, planJob, selectShard, windowKey, type Plan } from '../../src/plan/index.js';
import { readShardSplit } from '../../src/state/shard-split-record.js';
import type { RunReport } from '../../src/run/report.js';
import { WindowState, type WindowRecord } from '../../src/state/window-state.js';
import { createTestBucket, s3TestEnv, type TestBucket } from '../helpers/s3.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { baseEnv, listKeys, readNdjson, runCli, type CliResult } from './helpers.js';

const SHARDS = 3;
const CHAINS = [1, 8453, 42161];
const FROM = '2024-02-01';
const TO = '2024-02-04';
const PREFIX = 'exports/sharded';

const sandbox = useSandbox();
let bucket: TestBucket;
const tmp = useTempDir('ops-shards-');
let jobFile: string;
let plan: Plan;
let results: CliResult[];
let wallets: string[];
let tokens: { chainId: number; address: string }[];

const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';

beforeAll(async () => {
  bucket = await createTestBucket('ops-shards');
  wallets = sandbox.data.wallets.slice(0, 4).map((w) => w.address);
  tokens = sandbox.data.contracts
    .filter((c) => c.kind === 'erc20' && c.symbol === 'SUSD')
    .map((c) => ({ chainId: c.chainId, address: c.address }));
  expect(tokens.length).toBe(CHAINS.length);
  jobFile = join(tmp.dir, 'sharded.yaml');
  await writeFile(
    jobFile,
    stringify({
      name: 'sharded',
      source: { base_url: 'sandbox', chains: CHAINS },
      targets: [
        ...wallets.map((wallet) => ({ wallet, datasets: ['transactions'] })),
        ...tokens.map((t) => ({ contract: t.address, chains: [t.chainId], events: [TRANSFER] })),
      ],
      range: { from: FROM, to: TO, chunk: '1d' },
      output: { format: 'ndjson' },
    }),
  );
  plan = await planJob(await loadJob(jobFile), { completed: () => [] });

  const env = baseEnv({ ...(await s3TestEnv()), INSIGHT_EXPORT_STAGING_DIR: join(tmp.dir, 'staging') });
  const args = (i: number) => [
    'run',
    jobFile,
    '--shard',
    `${i}/${SHARDS}`,
    '--json',
    '--base-url',
    sandbox.url,
    '--destination',
    `s3://${bucket.bucket}/${PREFIX}`,
  ];
  results = await Promise.all(Array.from({ length: SHARDS }, (_, i) => runCli(args(i), env)));
}, 180_000);

afterAll(async () => {
  await bucket?.cleanup();
});

function reportOf(r: CliResult): RunReport {
  return JSON.parse(r.stdout) as RunReport;
}

async function completedRecords(): Promise<WindowRecord[]> {
  const out: WindowRecord[] = [];
  for await (const rec of new WindowState(bucket.store(PREFIX), 'sharded').completedRecords()) out.push(rec);
  return out;
}

describe('sharded run: N workers at once against one sandbox and S3', () => {
  it('every worker succeeds and exports only the windows the recorded split gives it', async () => {
    expect(plan.units.length).toBeGreaterThan(40);
    const { split } = await readShardSplit(bucket.store(PREFIX), 'sharded', SHARDS);
    for (const [i, r] of results.entries()) {
      expect(r.code, `shard ${i} stderr: ${r.stderr}`).toBe(0);
      const report = reportOf(r);
      expect(report.status).toBe('succeeded');
      expect(report.shard).toBe(`${i}/${SHARDS}`);
      expect(report.windows.done).toBe(selectShard(plan, split, i).units.length);
    }
    // The work is actually spread: more than one shard has windows.
    expect(results.filter((r) => reportOf(r).windows.done > 0).length).toBeGreaterThan(1);
  });

  it("the shards' completed windows are the unsharded plan, each window once, by the shard the split gives it", async () => {
    const records = await completedRecords();
    const planned = plan.units.map((u) => `${u.unitKey}@${u.windowKey}`).sort();
    const written = records.map((r) => `${r.unit_key}@${windowKey(r)}`).sort();
    expect(written).toEqual(planned);

    const { split } = await readShardSplit(bucket.store(PREFIX), 'sharded', SHARDS);
    const shardOfRun = new Map(results.map((r) => [reportOf(r).run_id, reportOf(r).shard]));
    for (const r of records) {
      const s = shardOfRun.get(r.run_id);
      expect(s, `marker of ${r.unit_key} written by an unknown run ${r.run_id}`).toBeDefined();
      expect(s, `${r.unit_key} ${windowKey(r)}`).toBe(`${ownerOf(split, r.unit_key, r.start)}/${SHARDS}`);
    }
    const reports = results.map(reportOf);
    expect(reports.reduce((n, r) => n + r.windows.done, 0)).toBe(plan.units.length);
  });

  it("the union of the shards' files holds every source row exactly once", async () => {
    const store = bucket.store(PREFIX);
    const range = { gte: Date.parse(`${FROM}T00:00:00Z`) / 1000, lt: Date.parse(`${TO}T00:00:00Z`) / 1000 };
    const filters = `filter_block_timestamp_gte=${range.gte}&filter_block_timestamp_lt=${range.lt}`;
    const expected: string[] = [];
    for (const w of wallets) {
      const q = sandbox.data.parseTransactionsQuery(`chain_id=${CHAINS.join(',')}&${filters}`);
      for (const t of sandbox.data.allWalletTransactions(w, q)) expected.push(`${t.chain_id}:${t.hash}:${w}`);
    }
    for (const t of tokens) {
      const q = sandbox.data.parseEventsQuery(`chain_id=${t.chainId}&${filters}`);
      for (const e of sandbox.data.allContractEvents(t.address, TRANSFER, q))
        expected.push(`${e.chain_id}:${e.transaction_hash}:${e.log_index}`);
    }
    expect(expected.length).toBeGreaterThan(1000);

    const dataKeys = (await listKeys(store)).filter((k) => !k.startsWith('_state/'));
    const ids: string[] = [];
    for (const key of dataKeys) for (const row of await readNdjson(store, key)) ids.push(row.item_id as string);
    expect(ids.length).toBe(expected.length);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(expected.sort());
    expect(results.map(reportOf).reduce((n, r) => n + r.rows, 0)).toBe(expected.length);
  });

  it('state is intact: markers list exactly the stored files, nothing pending, one last-run report per shard', async () => {
    const store = bucket.store(PREFIX);
    const all = await listKeys(store);
    const dataKeys = all.filter((k) => !k.startsWith('_state/')).sort();
    const listed = (await completedRecords()).flatMap((r) => r.files.map((f) => f.key)).sort();
    expect(listed).toEqual(dataKeys);
    expect(all.filter((k) => k.startsWith('_state/sharded/pending/'))).toEqual([]);
    const lastRuns = all.filter((k) => /^_state\/sharded\/last-run/.test(k)).sort();
    expect(lastRuns).toEqual(Array.from({ length: SHARDS }, (_, i) => `_state/sharded/last-run-shard-${i}-of-${SHARDS}.json`));

    const state = new WindowState(store, 'sharded');
    const completed = await state.completedIntervals();
    const replan = await planJob(await loadJob(jobFile), { completed: (k) => completed.get(k) ?? [] });
    expect(replan.units).toEqual([]);
  });

  it('running the shards again at once exports nothing and changes no file', async () => {
    const store = bucket.store(PREFIX);
    const before = new Map<string, string>();
    for await (const o of store.list('')) if (!o.key.startsWith('_state/')) before.set(o.key, o.etag);
    const env = baseEnv({ ...(await s3TestEnv()), INSIGHT_EXPORT_STAGING_DIR: join(tmp.dir, 'staging2') });
    const again = await Promise.all(
      Array.from({ length: SHARDS }, (_, i) =>
        runCli(
          [
            'run',
            jobFile,
            '--shard',
            `${i}/${SHARDS}`,
            '--json',
            '--base-url',
            sandbox.url,
            '--destination',
            `s3://${bucket.bucket}/${PREFIX}`,
          ],
          env,
        ),
      ),
    );
    for (const r of again) {
      expect(r.code, r.stderr).toBe(0);
      expect(reportOf(r).windows.planned).toBe(0);
    }
    const after = new Map<string, string>();
    for await (const o of store.list('')) if (!o.key.startsWith('_state/')) after.set(o.key, o.etag);
    expect(after).toEqual(before);
  });
});
