/**
 * A chain taken out of a job (`chains: [1, 8453]` -> `[8453]`) leaves chain 1's files at the
 * destination. `plan` and `run` name the stream with the next step (text and --json, the run's
 * report); `retire --keep` keeps it and they stop naming it; `retire --delete` removes its files,
 * state and claim (verify stays complete, no chain 1 file is left for a glob to read, the chain
 * can be added back and is exported again); killed at any write, the next `--delete` finishes
 * it. An Iceberg job's `--delete` commits the tables without the chain's files.
 */
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { mergeWorkerReports } from '../../src/run/merge-reports.js';
import type { RunReport } from '../../src/run/report.js';
import { retireStreams } from '../../src/state/removed-streams.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli } from '../helpers/cli-in-process.js';
import { icebirdRows, sortedRows } from '../helpers/iceberg.js';
import { Crash, crashingStore } from '../helpers/crashing-store.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from '../reliability/harness.js';

const sandbox = useSandbox();
const tmp = useTempDir('removed-streams-');
const PARTITIONING = '{dataset}/chain_id={chain_id}/date={date}';

function jobOf(chains: number[], out: string, format = 'ndjson') {
  return {
    name: 'edits',
    source: { base_url: sandbox.url, chains },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    output: { format, destination: out },
  };
}

function walk(dir: string, pre = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name), `${pre}${e.name}/`) : [`${pre}${e.name}`],
  );
}
const chainOneFiles = (out: string) => walk(out).filter((k) => k.includes('chain_id=1/'));
const chainOneState = (out: string) => walk(join(out, '_state/edits')).filter((k) => /\/1\/time(\/|\.json)/.test(k));
const unitOfChainOne = () => `transactions/${sandbox.data.wallet('alice.eth')!.address.toLowerCase()}/1/time`;
const claims = (out: string) => walk(join(out, '_state/_owners'));

/** A destination where job `edits` exported chains 1 and 8453, and its job file now on 8453 only. */
async function exported(name: string, format = 'ndjson'): Promise<{ out: string; before: string; after: string }> {
  const dir = join(tmp.dir, name);
  const out = join(dir, 'out');
  const before = await writeJob(dir, jobOf([1, 8453], out, format), 'before.yaml');
  const after = await writeJob(dir, jobOf([8453], out, format), 'after.yaml');
  expect((await runCli(['run', before, '--log-level', 'error'])).code).toBe(0);
  expect(chainOneFiles(out).length).toBeGreaterThan(0);
  return { out, before, after };
}

it('plan and run name the chain taken out; retire --delete removes its files, state and claim', { timeout: 120_000 }, async () => {
  const { out, before, after } = await exported('delete');
  const chainOne = `transactions/${sandbox.data.wallet('alice.eth')!.address.toLowerCase()}/1/time`;

  const plan = await runCli(['plan', after, '--log-level', 'error']);
  expect(plan.code).toBe(0);
  expect(plan.stdout).toContain('NOT IN THE JOB: 1 stream(s)');
  expect(plan.stdout).toContain(`${chainOne}: 2 window(s)`);
  expect(plan.stdout).toContain(`insight-export retire ${after} --delete`);
  const planJson = JSON.parse((await runCli(['plan', after, '--json', '--log-level', 'error'])).stdout);
  expect(planJson.removed_streams.streams).toEqual([{ unit: chainOne, windows: 2 }]);

  const run = await runCli(['run', after, '--json', '--log-level', 'error']);
  expect(run.code).toBe(0);
  const runReport = JSON.parse(run.stdout) as RunReport;
  expect(runReport.removed_streams!.streams).toEqual([{ unit: chainOne, windows: 2 }]);
  // `run --workers 2`: the run's report merges its workers', each of which names the stream.
  const workers = [0, 1].map((index) => ({ index, shard: `${index}/2`, exit_code: 0, report: runReport }));
  const merged = mergeWorkerReports({
    job: 'edits',
    runId: 'r',
    started: Date.now(),
    destination: out,
    unitsTotal: 1,
    shard: null,
    workers,
  });
  expect(merged.report.removed_streams).toEqual(runReport.removed_streams);
  const runText = await runCli(['run', after, '--log-level', 'error']);
  expect(runText.stdout).toContain('NOT IN THE JOB');

  const listed = await runCli(['retire', after, '--json', '--log-level', 'error']);
  expect(listed.code).toBe(0);
  expect(JSON.parse(listed.stdout).streams).toEqual([{ unit: chainOne, windows: 2 }]);
  expect(chainOneFiles(out).length).toBeGreaterThan(0); // listing deletes nothing

  const deleted = await runCli(['retire', after, '--delete', '--json', '--log-level', 'error']);
  expect(deleted.code, deleted.stderr).toBe(0);
  expect(JSON.parse(deleted.stdout).deleted).toMatchObject({ streams: [chainOne], files: 2, claims: 1, resumed: false });
  expect(chainOneFiles(out)).toEqual([]);
  expect(chainOneState(out)).toEqual([]);
  expect(claims(out)).toHaveLength(1);

  const verify = await runCli(['verify', after, '--json', '--log-level', 'error']);
  expect(verify.code, verify.stdout).toBe(0);
  expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, other_units: [], files: { unreferenced: 0 } });
  expect((await runCli(['plan', after, '--log-level', 'error'])).stdout).not.toContain('NOT IN THE JOB');

  // Chain 1 added back: exported again, whole.
  expect((await runCli(['run', before, '--log-level', 'error'])).code).toBe(0);
  expect(chainOneFiles(out)).toHaveLength(2);
  expect((await runCli(['verify', before, '--log-level', 'error'])).code).toBe(0);
});

it('retire --keep keeps the stream and plan and run stop naming it', { timeout: 120_000 }, async () => {
  const { out, after } = await exported('keep');
  const kept = await runCli(['retire', after, '--keep', '--log-level', 'error']);
  expect(kept.code, kept.stderr).toBe(0);
  expect(kept.stdout).toContain('kept 1 stream(s)');
  expect(chainOneFiles(out).length).toBeGreaterThan(0);
  expect((await runCli(['plan', after, '--log-level', 'error'])).stdout).not.toContain('NOT IN THE JOB');
  const run = await runCli(['run', after, '--json', '--log-level', 'error']);
  expect(run.code).toBe(0);
  expect(JSON.parse(run.stdout).removed_streams).toBeUndefined();
  // Kept is not forever: --delete still removes it.
  expect((await runCli(['retire', after, '--delete', '--log-level', 'error'])).code).toBe(0);
  expect(chainOneFiles(out)).toEqual([]);
});

it('a removal killed at any write is finished by the next one, and touches nothing of the chains kept', { timeout: 120_000 }, async () => {
  const { out: seed, after } = await exported('crash-seed');
  const job = await loadJob(after);
  const kept = walk(seed).filter((k) => !k.includes('chain_id=1/') && !/\/1\/time(\/|\.json)/.test(k) && !k.includes('_owners'));
  const unit = `transactions/${sandbox.data.wallet('alice.eth')!.address.toLowerCase()}/1/time`;
  const countDir = join(tmp.dir, 'crash-count');
  cpSync(seed, countDir, { recursive: true });
  const counting = crashingStore(await openStore(countDir), Number.MAX_SAFE_INTEGER, false);
  await retireStreams(counting, job, [unit], PARTITIONING);
  expect(counting.writes).toBeGreaterThan(4);
  for (let budget = 0; budget < counting.writes; budget++) {
    for (const after of [false, true]) {
      const dir = join(tmp.dir, `crash-${budget}-${after}`);
      cpSync(seed, dir, { recursive: true });
      await expect(retireStreams(crashingStore(await openStore(dir), budget, after), job, [unit], PARTITIONING)).rejects.toThrow(Crash);
      // Listed again, as the command lists them: a stream whose state is gone but whose removal is recorded is finished anyway.
      await retireStreams(await openStore(dir), job, chainOneState(dir).length > 0 ? [unit] : [], PARTITIONING);
      expect(chainOneFiles(dir), `crash at write ${budget}`).toEqual([]);
      expect(chainOneState(dir)).toEqual([]);
      expect(claims(dir)).toHaveLength(1);
      expect(walk(dir).filter((k) => kept.includes(k))).toEqual(kept);
    }
  }
});

it(
  "an Iceberg job's retire --delete takes the chain's rows out of the tables in one snapshot, and an interrupted one is finished",
  { timeout: 120_000 },
  async () => {
    const { out, after } = await exported('iceberg', 'iceberg');
    const store = await openStore(out);
    const before = await icebirdRows(store, 'transactions');
    const kept = sortedRows(before.filter((r) => r.chain_id !== '1'));
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(before.length);
    const dataFiles = chainOneFiles(out);

    // Killed after the streams' state is deleted, before the tables' commit: the next --delete finishes it.
    const unit = `transactions/${sandbox.data.wallet('alice.eth')!.address.toLowerCase()}/1/time`;
    const killed = { check: () => Promise.resolve(), commit: () => Promise.reject(new Crash()) };
    await expect(retireStreams(store, await loadJob(after), [unit], PARTITIONING, { tables: killed })).rejects.toThrow(Crash);
    expect(chainOneState(out)).toEqual([]);

    const r = await runCli(['retire', after, '--delete', '--json', '--log-level', 'error']);
    expect(r.code, r.stderr).toBe(0);
    const done = JSON.parse(r.stdout) as {
      deleted: { streams: string[]; resumed: boolean };
      iceberg_commits: { table: string; deleted_files: number }[];
    };
    expect(done.deleted).toMatchObject({ streams: [unit], resumed: true });
    expect(done.iceberg_commits).toEqual([expect.objectContaining({ table: 'transactions', deleted_files: dataFiles.length })]);
    expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(kept);
    expect(claims(out)).toHaveLength(1);
    // Their files stay for the older snapshots that name them (expire-snapshots, then remove-orphan-files).
    expect(chainOneFiles(out)).toEqual(dataFiles);
    const verify = await runCli(['verify', after, '--json', '--log-level', 'error']);
    expect(verify.code, verify.stdout).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({ ok: true, problems: [] });
    expect((await runCli(['plan', after, '--log-level', 'error'])).stdout).not.toContain('NOT IN THE JOB');
  },
);

it(
  "an Iceberg job's retire --delete needs no source when the job names no wallet by name (a job file without source.base_url)",
  { timeout: 120_000 },
  async () => {
    const dir = join(tmp.dir, 'iceberg-no-source');
    const out = join(dir, 'out');
    const before = await writeJob(dir, jobOf([1, 8453], out, 'iceberg'), 'before.yaml');
    const { source, ...rest } = jobOf([8453], out, 'iceberg');
    const after = await writeJob(dir, { ...rest, source: { chains: source.chains } }, 'after.yaml');
    expect((await runCli(['run', before, '--log-level', 'error'])).code).toBe(0);
    const store = await openStore(out);
    const kept = sortedRows((await icebirdRows(store, 'transactions')).filter((r) => r.chain_id !== '1'));
    expect(kept.length).toBeGreaterThan(0);
    const stateBefore = walk(join(out, '_state'));

    // A wallet given by name: streams are named by address, so retire resolves it first (through the
    // source), lists only chain 1, and without a base URL refuses before it changes anything.
    const named = { ...rest, targets: [{ wallet: 'alice.eth', datasets: ['transactions'] }] };
    const namedJob = await writeJob(dir, { ...named, source: { base_url: sandbox.url, chains: [8453] } }, 'named.yaml');
    const listed = await runCli(['retire', namedJob, '--json', '--log-level', 'error']);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { streams: { unit: string }[] }).streams.map((s) => s.unit)).toEqual([unitOfChainOne()]);
    const namedNoSource = await writeJob(dir, { ...named, source: { chains: [8453] } }, 'named-no-source.yaml');
    const refused = await runCli(['retire', namedNoSource, '--delete', '--log-level', 'error']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('source.base_url');
    expect(refused.stderr).toContain('alice.eth');
    expect(walk(join(out, '_state'))).toEqual(stateBefore);
    // A catalog that cannot be reached: found before the first write, not after the state is deleted.
    const unreachable = { ...rest, source: { chains: [8453] }, output: { ...rest.output, catalog: { uri: 'http://127.0.0.1:9' } } };
    const noCatalog = await runCli(['retire', await writeJob(dir, unreachable, 'no-catalog.yaml'), '--delete', '--log-level', 'error']);
    expect(noCatalog.code, noCatalog.stderr).not.toBe(0);
    expect(walk(join(out, '_state'))).toEqual(stateBefore);

    const r = await runCli(['retire', after, '--delete', '--json', '--log-level', 'error']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).iceberg_commits).toEqual([expect.objectContaining({ table: 'transactions' })]);
    expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(kept);
    expect(chainOneState(out)).toEqual([]);
  },
);

it(
  'a target taken out that was the only writer of an Iceberg table: retire --delete names the table and the commands that finish it, and finishes once it is dropped',
  { timeout: 120_000 },
  async () => {
    const dir = join(tmp.dir, 'iceberg-gone-table');
    const out = join(dir, 'out');
    const bob = { wallet: sandbox.data.wallet('bob.eth')!.address, datasets: ['transactions'], tables: { transactions: 'bob_tx' } };
    const one = jobOf([8453], out, 'iceberg');
    const before = await writeJob(dir, { ...one, targets: [...one.targets, bob] }, 'before.yaml');
    const after = await writeJob(dir, one, 'after.yaml');
    expect((await runCli(['run', before, '--log-level', 'error'])).code).toBe(0);
    const store = await openStore(out);
    const kept = sortedRows(await icebirdRows(store, 'transactions'));
    const stateBefore = walk(join(out, '_state'));

    const refused = await runCli(['retire', after, '--delete', '--log-level', 'error']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('only writers of Iceberg table(s) bob_tx');
    expect(refused.stderr).toContain(`delete ${join(out, 'bob_tx')}/`);
    expect(refused.stderr).toContain('retire <job file> --keep');
    expect(walk(join(out, '_state'))).toEqual(stateBefore);

    rmSync(join(out, 'bob_tx'), { recursive: true });
    const r = await runCli(['retire', after, '--delete', '--json', '--log-level', 'error']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).deleted.streams).toHaveLength(1);
    expect(sortedRows(await icebirdRows(store, 'transactions'))).toEqual(kept);
    expect((await runCli(['plan', after, '--log-level', 'error'])).stdout).not.toContain('NOT IN THE JOB');
    const verify = await runCli(['verify', after, '--json', '--log-level', 'error']);
    expect(verify.code, verify.stdout).toBe(0);
  },
);
