/**
 * Issue 44: two shards of one job (`--shard 0/2` and `--shard 1/2`, each its own CLI process,
 * started together) commit the same tables through one Iceberg REST catalog (the sandbox's) and
 * lose no snapshot. The crash points' holds (test/reliability/fixtures/crash-points.ts: `table:1`
 * is a shard's first write of a snapshot's files, after it loaded the table and read the state)
 * order their steps so that the commits race both ways:
 *
 * - the first round, shard 0 loads the tables (creating them) and reads the state before shard 1
 *   exports anything; shard 1 commits first, so shard 0's commit is answered 409 (its
 *   assert-ref-snapshot-id is stale): it reads the table and the state again and takes none of the
 *   winner's files out;
 * - the second round, shard 1 (holding the whole state) loses: it commits its files on top of the
 *   winner's snapshot.
 *
 * After each round the catalog's current snapshot of each table reads with icebird as a fresh
 * single-process export; afterwards each table's history in the catalog is a chain (each parent
 * the previous, sequence numbers 1..n) of exactly the snapshots the shards reported, each loser's
 * log says its commit was retried, and every request and answer validates against the spec.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CatalogExchange } from '@insight-export/sandbox';
import type { RunReport } from '../../src/run/report.js';
import { LocalStore } from '../../src/store/local.js';
import { restSpec } from '../helpers/catalog-sandbox.js';
import { freshExportRows, icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { useSandbox } from '../helpers/sandbox.js';
import {
  ALICE_AND_TRANSFERS_TABLES,
  aliceAndTransfersIcebergJob,
  runCli,
  useTestCli,
  writeJob,
  type CliResult,
} from '../reliability/harness.js';

const exchanges: CatalogExchange[] = [];
const sandbox = useSandbox({ seed: 40, transactions: 4_000, catalog: { onExchange: (e) => exchanges.push(e) } });
const work = useTestCli('catalog-shards-');
const TABLES = ALICE_AND_TRANSFERS_TABLES;
const ROUNDS = ['2024-02-03', '2024-02-04'];
const RETRIED = 'another writer committed to the Iceberg table first';
const NS = 'catshards';

// Windows of 6 hours: each round's new span of each stream is split between the two shards.
const plainJob = (to: string, destination: string) => aliceAndTransfersIcebergJob(sandbox, 'catshards', to, '6h', destination);
function job(to: string, destination: string): Record<string, unknown> {
  const j = plainJob(to, destination);
  return { ...j, output: { ...j.output, catalog: { uri: sandbox.catalog.url, namespace: NS } } };
}

const fresh: Record<string, Record<string, string[]>> = {};
beforeAll(async () => {
  for (const to of ROUNDS) {
    const dir = join(work.dir, `fresh-${to}`);
    fresh[to] = await freshExportRows({ job: plainJob(to, join(dir, 'out')), dir }, TABLES);
  }
});

afterAll(() => {
  expect(exchanges.length).toBeGreaterThan(0);
  expect(exchanges.flatMap((e) => restSpec().problems(e))).toEqual([]);
});

/** A shard's CLI run, held at the crash points' `holds` until the test lets each go. */
function shard(jobFile: string, index: number, holdDir: string, holds: string[]) {
  mkdirSync(holdDir, { recursive: true });
  let ended = false;
  const done = runCli(work.cli, ['run', jobFile, '--shard', `${index}/2`, '--log-level', 'warn', '--json'], {
    env: { INSIGHT_TEST_HOLD: holds.join(','), INSIGHT_TEST_HOLD_DIR: holdDir },
    timeoutMs: 300_000,
  }).finally(() => (ended = true));
  const name = (hold: string) => join(holdDir, hold.replace(':', '-'));
  const release = (hold: string) => writeFileSync(`${name(hold)}.go`, '');
  return {
    async reached(hold: string): Promise<void> {
      while (!existsSync(`${name(hold)}.held`)) {
        if (ended) {
          const r = await done;
          throw new Error(`shard ${index} ended before ${hold}: ${r.code} ${r.stdout.slice(0, 3000)} ${r.stderr.slice(-2000)}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    release,
    async finish(hold: string): Promise<CliResult> {
      release(hold);
      const r = await done;
      expect(r.code, `shard ${index}: ${r.stderr}`).toBe(0);
      return r;
    },
  };
}

const report = (r: CliResult) => JSON.parse(r.stdout) as RunReport;
const out = () => join(work.dir, 'shards', 'out');

interface CatalogTable {
  'metadata-location': string;
  metadata: {
    'current-snapshot-id'?: number | null;
    snapshots?: { 'snapshot-id': number; 'parent-snapshot-id'?: number; 'sequence-number': number }[];
  };
}

async function loadTable(table: string): Promise<CatalogTable> {
  const res = await fetch(`${sandbox.catalog.url}/v1/namespaces/${NS}/tables/${table}`);
  expect(res.status, table).toBe(200);
  return (await res.json()) as CatalogTable;
}

async function expectTablesEqualAFreshExport(to: string): Promise<void> {
  for (const table of TABLES) {
    const location = (await loadTable(table))['metadata-location'];
    const rows = await icebirdRows(new LocalStore(out()), table, basename(location));
    expect(sortedRows(rows), `${table} up to ${to}`).toEqual(fresh[to]![table]);
  }
}

it(
  'two shards commit the same tables through one catalog at once, both ways round: no snapshot lost, the 409 retried',
  { timeout: 600_000 },
  async () => {
    const commits: { table: string; snapshot_id: number }[] = [];
    const base = join(work.dir, 'shards');

    // Round 1: shard 0 loads the tables and reads the state before shard 1 exports anything; shard 1 commits first.
    const first = await writeJob(base, job(ROUNDS[0]!, out()), 'first.yaml');
    const stale = shard(first, 0, join(base, 'holds-1-0'), ['table:1']);
    const whole = shard(first, 1, join(base, 'holds-1-1'), ['state:1']);
    await stale.reached('table:1');
    const winner = await whole.finish('state:1');
    const loser = await stale.finish('table:1');
    expect(loser.stderr).toContain(RETRIED);
    expect(exchanges.some((e) => e.method === 'POST' && /\/tables\/[^/]+$/.test(e.path) && e.status === 409)).toBe(true);
    expect(report(winner).iceberg_commits).toHaveLength(TABLES.length);
    await expectTablesEqualAFreshExport(ROUNDS[0]!);
    expect(report(loser).iceberg_commits!.filter((c) => c.deleted_files > 0)).toEqual([]);
    commits.push(...report(winner).iceberg_commits!, ...report(loser).iceberg_commits!);

    // Round 2: shard 0 reads the state before shard 1 exports its new windows and commits first;
    // shard 1, holding the whole state, loses the race and commits the rest on top.
    const all = await writeJob(base, job(ROUNDS[1]!, out()));
    const partial = shard(all, 0, join(base, 'holds-2-0'), ['table:1']);
    const full = shard(all, 1, join(base, 'holds-2-1'), ['state:1', 'table:1']);
    await partial.reached('table:1');
    full.release('state:1');
    await full.reached('table:1');
    const first2 = await partial.finish('table:1');
    const second2 = await full.finish('table:1');
    expect(second2.stderr).toContain(RETRIED);
    expect(report(first2).iceberg_commits!.length, first2.stderr).toBeGreaterThan(0);
    expect(report(second2).iceberg_commits!.length, second2.stderr).toBeGreaterThan(0);
    commits.push(...report(first2).iceberg_commits!, ...report(second2).iceberg_commits!);
    await expectTablesEqualAFreshExport(ROUNDS[1]!);

    for (const table of TABLES) {
      const { metadata } = await loadTable(table);
      const history = metadata.snapshots ?? [];
      expect(
        history.map((s) => s['sequence-number']),
        table,
      ).toEqual(history.map((_, i) => i + 1));
      history.forEach((s, i) => expect(s['parent-snapshot-id'], `${table} snapshot ${i + 1}`).toBe(history[i - 1]?.['snapshot-id']));
      expect(metadata['current-snapshot-id']).toBe(history.at(-1)!['snapshot-id']);
      // Every snapshot a shard reported committing to this table, and no other.
      expect(history.map((s) => s['snapshot-id']).sort(), table).toEqual(
        commits
          .filter((c) => c.table === table)
          .map((c) => c.snapshot_id)
          .sort(),
      );
    }
  },
);
