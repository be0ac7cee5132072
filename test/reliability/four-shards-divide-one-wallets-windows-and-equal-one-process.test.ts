/**
 * The job shards used to leave idle: one wallet on three chains (three units), many windows. Four
 * shard processes at once (--shard i/4, as the pods of an indexed job) each export a part of
 * every unit's windows, none more than twice the mean of rows; together their files equal, byte
 * for byte (every row, every field), those of one process exporting the job alone; a second round
 * exports nothing. After a reorganisation of one chain, rounds of the four shards repair it (the
 * unit's lead finds it once, each window's owner exports it again) and the files equal a fresh
 * export of the new branch.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { reorganise } from '@insight-export/sandbox';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { listFiles } from '../helpers/export.js';
import { buildTestCli, readNdjsonExport, runCli, writeJob, type TestCli } from './harness.js';

const sandbox = useSandbox({ transactions: 40_000 });
const tmp = useTempDir('four-shards-');
let cli: TestCli;

const SHARDS = 4;
const CHAINS = [1, 8453, 42161];
const REORG_CHAIN = 8453;

function job(destination: string): Record<string, unknown> {
  return {
    name: 'one-wallet',
    source: { base_url: sandbox.url, chains: CHAINS },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    // Up to the head with nothing held back, so a reorganisation of the newest blocks touches exported rows.
    // A horizon deep enough that the reorganisation below, reaching back across several shards' windows, is repaired by runs alone.
    range: { from: '2024-02-01', to: 'latest', safety_lag: '0s', chunk: '3h', reorg_horizon: 1_000_000 },
    // Windows committed one by one: shards cut a unit's windows anywhere, and batched, each shard's part
    // of a day would be a file of its own where one process writes one (compared file by file here).
    output: { format: 'ndjson', destination, batch_windows: 'off' },
  };
}

interface Outcome {
  code: number | null;
  report: RunReport;
  stderr: string;
}

async function run(jobFile: string, extra: string[] = []): Promise<Outcome> {
  const r = await runCli(cli, ['run', jobFile, '--log-level', 'warn', '--json', ...extra], { timeoutMs: 240_000 });
  expect(r.stdout.trim().startsWith('{'), r.stderr).toBe(true);
  return { code: r.code, report: JSON.parse(r.stdout) as RunReport, stderr: r.stderr };
}

/** Block numbers of a chain's exported rows. */
function exportedBlocks(root: string, chainId: number): number[] {
  const out: number[] = [];
  for (const rel of listFiles(root)) {
    if (rel.startsWith('_state/') || rel.startsWith('.insight-export-tmp/')) continue;
    const bytes = readFileSync(join(root, rel));
    for (const line of (rel.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8').split('\n')) {
      if (line === '') continue;
      const row = JSON.parse(line) as { chain_id: number; block_number: number };
      if (row.chain_id === chainId) out.push(row.block_number);
    }
  }
  return out;
}

const shards = (jobFile: string) => Promise.all(Array.from({ length: SHARDS }, (_, i) => run(jobFile, ['--shard', `${i}/${SHARDS}`])));

let single: string;
let sharded: string;
let shardedJob: string;
let first: Outcome[];

beforeAll(async () => {
  cli = await buildTestCli();
  single = join(tmp.dir, 'single', 'out');
  sharded = join(tmp.dir, 'sharded', 'out');
  const alone = await run(await writeJob(join(tmp.dir, 'single'), job(single)));
  expect(alone.code, alone.stderr).toBe(0);
  shardedJob = await writeJob(join(tmp.dir, 'sharded'), job(sharded));
  first = await shards(shardedJob);
}, 600_000);

describe('four shards of a one-wallet, three-chain job', () => {
  it('every shard exports windows of every unit, none more than twice the mean of rows', () => {
    for (const [i, r] of first.entries()) {
      expect(r.code, `shard ${i}: ${r.stderr}`).toBe(0);
      expect(r.report.shard).toBe(`${i}/${SHARDS}`);
      for (const chain of CHAINS) expect(r.report.by_chain[String(chain)]?.windows.done, `shard ${i} chain ${chain}`).toBeGreaterThan(0);
    }
    const rows = first.map((r) => r.report.rows);
    const mean = rows.reduce((a, b) => a + b, 0) / SHARDS;
    expect(mean).toBeGreaterThan(0);
    for (const n of rows) expect(n).toBeLessThanOrEqual(2 * mean);
    // Each report shows the split: every shard's windows, adding up to the job's.
    const total = first.reduce((n, r) => n + r.report.windows.planned, 0);
    for (const r of first) {
      expect(r.report.shards!.map((s) => s.shard)).toEqual([0, 1, 2, 3]);
      expect(r.report.shards!.reduce((n, s) => n + s.windows, 0)).toBe(total);
    }
  });

  it('the union of their files equals the export of one process, every file byte for byte', () => {
    const one = readNdjsonExport(single);
    const four = readNdjsonExport(sharded);
    expect(one.itemIds.length).toBeGreaterThan(1000);
    expect([...four.files.keys()].sort()).toEqual([...one.files.keys()].sort());
    expect(four.files).toEqual(one.files);
    expect(four.itemIds.sort()).toEqual(one.itemIds.sort());
  });

  it('a second round of the four shards exports nothing and changes no file', async () => {
    const before = readNdjsonExport(sharded).files;
    for (const r of await shards(shardedJob)) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.report.windows.planned).toBe(0);
    }
    expect(readNdjsonExport(sharded).files).toEqual(before);
  });

  it("a reorganisation is found by each unit's lead once, its windows exported again by their owners, and the files equal a fresh export", async () => {
    // The newest 40% of the chain's exported blocks: windows of at least two shards.
    const blocks = exportedBlocks(single, REORG_CHAIN);
    reorganise(sandbox.data, REORG_CHAIN, Math.floor(0.4 * (Math.max(...blocks) - Math.min(...blocks))));
    const found: string[] = [];
    const exportedAgainBy = new Set<string>();
    let rounds = 0;
    for (; rounds < 4; rounds++) {
      const round = await shards(shardedJob);
      for (const r of round) {
        expect(r.code, r.stderr).toBe(0);
        found.push(...(r.report.reorgs ?? []).map((x) => x.unit_key));
        if ((r.report.by_chain[String(REORG_CHAIN)]?.windows.done ?? 0) > 0) exportedAgainBy.add(r.report.shard!);
      }
      // The owners that started before the lead recorded the repair export their windows in their next run.
      if (round.every((r) => r.report.windows.planned === 0 && (r.report.reorgs ?? []).length === 0)) break;
    }
    expect(rounds).toBeLessThan(4);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`/${REORG_CHAIN}/`);
    expect(exportedAgainBy.size).toBeGreaterThanOrEqual(2);

    const fresh = join(tmp.dir, 'fresh', 'out');
    const again = await run(await writeJob(join(tmp.dir, 'fresh'), job(fresh)));
    expect(again.code, again.stderr).toBe(0);
    const want = readNdjsonExport(fresh);
    const got = readNdjsonExport(sharded);
    expect([...got.files.keys()].sort()).toEqual([...want.files.keys()].sort());
    expect(got.files).toEqual(want.files);
  });
});
