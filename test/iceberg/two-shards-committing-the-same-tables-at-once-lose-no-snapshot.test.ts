/**
 * Issue 34: two concurrent runs on one table lose no snapshot. Two shards of one job (`--shard 0/2`
 * and `--shard 1/2`, each its own CLI process, started together) commit the same tables at their
 * ends. The crash points' holds (test/reliability/fixtures/crash-points.ts) order their steps so
 * that the commits race both ways:
 *
 * - the first round, the shard that read the state before the other shard's windows were
 *   committed loses the race: it reads the table and the state again, finds the winner's snapshot
 *   already lists every file, and takes none of them out;
 * - the second round, the shard holding the whole state loses: it commits its files on top of the
 *   winner's snapshot.
 *
 * After each round the tables read with icebird as a fresh single-process export; afterwards the
 * snapshot history is a chain (each parent the previous, sequence numbers 1..n) holding every
 * snapshot either shard reported, and each loser's log says its commit was retried.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { readCurrentVersion } from '../../src/iceberg/index.js';
import type { RunReport } from '../../src/run/report.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
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

const sandbox = useSandbox({ seed: 40, transactions: 4_000 });
const work = useTestCli('iceberg-shards-');
const TABLES = ALICE_AND_TRANSFERS_TABLES;
const ROUNDS = ['2024-02-03', '2024-02-04'];
const RETRIED = 'another writer committed to the Iceberg table first';

// Windows of 6 hours: each round's new span of each unit is split between the two shards.
const job = (to: string, destination: string) => aliceAndTransfersIcebergJob(sandbox, 'iceshards', to, '6h', destination);

/** Each round's fresh single-process export, per table. */
const fresh: Record<string, Record<string, string[]>> = {};

beforeAll(async () => {
  for (const to of ROUNDS) {
    const dir = join(work.dir, `fresh-${to}`);
    fresh[to] = await freshExportRows({ job: job(to, join(dir, 'out')), dir }, TABLES);
  }
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
    done,
    /** Resolves once the shard waits at `hold`; fails if it ended without reaching it. */
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
    /** Lets the shard go at `hold` and waits for its end (exit 0). */
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

async function expectTablesEqualAFreshExport(to: string): Promise<void> {
  const store = new LocalStore(out());
  for (const table of TABLES) expect(sortedRows(await icebirdRows(store, table)), `${table} up to ${to}`).toEqual(fresh[to]![table]);
}

it(
  'two shards commit the same tables at once, both ways round: no snapshot and no file lost, retries logged',
  { timeout: 600_000 },
  async () => {
    /** Every commit either shard reported. */
    const commits: { table: string; snapshot_id: number }[] = [];
    const base = join(work.dir, 'shards');

    // Round 1: shard 0 reads the state before shard 1 exports anything, then shard 1 commits first.
    const first = await writeJob(base, job(ROUNDS[0]!, out()), 'first.yaml');
    const stale = shard(first, 0, join(base, 'holds-1-0'), ['table:1']);
    const whole = shard(first, 1, join(base, 'holds-1-1'), ['state:1']);
    await stale.reached('table:1');
    const winner = await whole.finish('state:1');
    const loser = await stale.finish('table:1');
    expect(loser.stderr).toContain(RETRIED);
    expect(report(winner).iceberg_commits).toHaveLength(TABLES.length);
    await expectTablesEqualAFreshExport(ROUNDS[0]!);
    // The loser takes none of the winner's files out (its retry finds them in the state it reads again).
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
    // The loser commits its windows on top of the winner's snapshot (of every table it has new windows of).
    expect(report(first2).iceberg_commits!.length, first2.stderr).toBeGreaterThan(0);
    expect(report(second2).iceberg_commits!.length, second2.stderr).toBeGreaterThan(0);
    commits.push(...report(first2).iceberg_commits!, ...report(second2).iceberg_commits!);
    await expectTablesEqualAFreshExport(ROUNDS[1]!);

    const store = new LocalStore(out());
    for (const table of TABLES) {
      const { meta, version } = (await readCurrentVersion(store, table))!;
      const history = meta.snapshots;
      expect(version, table).toBe(history.length);
      expect(
        history.map((s) => s['sequence-number']),
        table,
      ).toEqual(history.map((_, i) => i + 1));
      history.forEach((s, i) => expect(s['parent-snapshot-id'], `${table} snapshot ${i + 1}`).toBe(history[i - 1]?.['snapshot-id']));
      expect(meta['current-snapshot-id']).toBe(history.at(-1)!['snapshot-id']);
      expect(meta['snapshot-log'].map((l) => l['snapshot-id'])).toEqual(history.map((s) => s['snapshot-id']));
      // Every snapshot a shard reported committing to this table, and no other.
      expect(history.map((s) => s['snapshot-id']).sort(), table).toEqual(
        commits
          .filter((c) => c.table === table)
          .map((c) => c.snapshot_id)
          .sort(),
      );
    }
    const verify = await runCli(work.cli, ['verify', all, '--json']);
    expect((JSON.parse(verify.stdout) as VerifyReport).problems).toEqual([]);
    expect(verify.code, verify.stderr).toBe(0);
  },
);
