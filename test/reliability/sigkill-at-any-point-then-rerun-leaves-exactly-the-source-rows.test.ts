/**
 * Crash consistency: the exporter (a child process) is killed with SIGKILL while paging, encoding,
 * uploading, writing state, folding completed windows into unit manifests (before and after every
 * manifest and segment write), holding a store lock, during a --force re-export and during the
 * recovery of an earlier crash, and at random moments. Right after each kill a reader sees only
 * whole files; the next run finishes (exit 0) and the destination then holds exactly the source's
 * rows (every item_id once), verify finds nothing wrong, and every file is byte-identical to
 * the file an undisturbed run wrote.
 *
 * The same on S3 (radosgw): kills mid-upload, around state writes and at random moments (by
 * default mid-upload and one of the others).
 *
 * Seeded: RELIABILITY_SEED=<n> repeats a sequence (the seed is printed). By default one trial of
 * each kind of point runs, drawn with the seed; INSIGHT_EXPORT_LONG_TESTS=1 runs all (22, and
 * one per fold write of a run).
 */
import { existsSync, readdirSync } from 'node:fs';
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { expect, it } from 'vitest';
import { loadJob } from '../../src/job/index.js';
import { verifyDestination } from '../../src/state/verify.js';
import { countRows } from '../../src/state/exported-files.js';
import { LocalStore } from '../../src/store/local.js';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { ObjectStore } from '../../src/store/store.js';
import { downloadPrefix, duckdb, listFiles, sqlString, truthContractEvents, truthWalletTransactions, unixDay } from '../helpers/export.js';
import { s3TestEnv, useTestBucket } from '../helpers/s3.js';
import { LONG_TESTS, RELIABILITY_SEED as SEED, longModeTimeout, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { runCli as runCliInProcess } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { duplicates, readNdjsonExport, runCli, setDigest, writeJob, useTestCli, type CliResult } from './harness.js';

const sandbox = useSandbox({ latency: { fixedMs: 2, jitterMs: 8 } });
const bucket = useTestBucket('crash');
const TRANSFER = 'Transfer(address indexed from, address indexed to, uint256 value)';
const CHAINS = [1, 8453, 42161];
const RANGE = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-04') };

const work = useTestCli('crash-trials-');

type Kind = 'page' | 'encode' | 'upload' | 'state' | 'state-after' | 'fold' | 'lock' | 'time' | 'recovery' | 'force';
type Format = 'parquet' | 'ndjson';
interface Trial {
  n: number;
  kind: Kind;
  format: Format;
  /** INSIGHT_TEST_CRASH values of the killed runs, in order ('' = a timed kill). */
  crashes: string[];
  delayMs?: number;
  force?: boolean;
}

function job(base: string, format: Format) {
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  return {
    name: 'crash',
    source: { base_url: sandbox.url, chains: CHAINS },
    targets: [
      { wallet: alice, datasets: ['transactions'] },
      { contract: susd, chains: [1], events: [TRANSFER] },
    ],
    range: { from: '2024-02-01', to: '2024-02-04', chunk: '1d' },
    output: { format, destination: join(base, 'out') },
  };
}

const flags = (base: string) => ['--staging-dir', join(base, 'staging'), '--log-level', 'error', '--units-in-flight', '4'];

const POINTS = LONG_TESTS ? 'every point of runs' : '10 points of runs (one of each kind)';
/** Long mode: every point, 38 trials two at a time, about 40 s each on a loaded 2-core machine. */
const LONG_TRIALS = 38;
const LIMIT = longModeTimeout(300_000, LONG_TRIALS, 40_000);
it(`SIGKILL at ${POINTS}; the next run completes with exactly the source rows`, { timeout: LIMIT }, async () => {
  const random = mulberry32(SEED);
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
  const expected = [
    ...truthWalletTransactions(sandbox.data, alice, CHAINS, RANGE).map((t) => `${t.chain_id}:${t.hash}:${alice}`),
    ...truthContractEvents(sandbox.data, susd, TRANSFER, [1], RANGE).map((e) => `${e.chain_id}:${e.transaction_hash}:${e.log_index}`),
  ];

  // Undisturbed runs, one per format: how often each crash point occurs, how long a run takes, the files it writes.
  const probes = {} as Record<Format, { dir: string; ms: number; counts: Record<string, number>; files: Map<string, string> }>;
  for (const format of ['ndjson', 'parquet'] as const) {
    const probeDir = join(work.dir, `probe-${format}`);
    const probeJob = await writeJob(probeDir, job(probeDir, format));
    const countsFile = join(probeDir, 'counts.json');
    const probe = await runCli(work.cli, ['run', probeJob, ...flags(probeDir)], { env: { INSIGHT_TEST_COUNTS: countsFile } });
    expect(probe.code, probe.stderr).toBe(0);
    const counts = JSON.parse(await readFile(countsFile, 'utf8')) as Record<string, number>;
    const files = await fileDigests(join(probeDir, 'out'));
    expect(files.size).toBeGreaterThan(0);
    probes[format] = { dir: probeDir, ms: probe.ms, counts, files };
  }

  const all: Trial[] = [];
  const add = (kind: Kind, format: Format, t: Omit<Trial, 'n' | 'kind' | 'format'>) => all.push({ n: all.length + 1, kind, format, ...t });
  const pick = (format: Format, p: string) => `${p}:${1 + Math.floor(random() * probes[format].counts[p]!)}`;
  for (let i = 0; i < 2; i++) {
    for (const p of ['page', 'upload', 'state', 'state-after', 'lock'] as const) add(p, 'ndjson', { crashes: [pick('ndjson', p)] });
    // A crash in the middle of an upload, then another one while the next run removes what it left.
    add('recovery', 'ndjson', { crashes: [pick('ndjson', 'upload'), 'delete:1'] });
  }
  for (let i = 0; i < 3; i++) add('encode', 'parquet', { crashes: [pick('parquet', 'encode')] });
  for (const format of ['ndjson', 'ndjson', 'parquet'] as const)
    add('time', format, { crashes: [''], delayMs: Math.round(300 + random() * probes[format].ms * 0.8) });
  for (const [format, p] of [
    ['ndjson', 'state'],
    ['ndjson', 'upload'],
    ['parquet', 'state-after'],
    ['parquet', 'encode'],
  ] as const) {
    add('force', format, { crashes: [pick(format, p)], force: true });
  }
  // Every write of the folds that end a run: before it (ndjson) and after it (parquet).
  for (let n = 1; n <= probes.ndjson.counts.fold!; n++) add('fold', 'ndjson', { crashes: [`fold:${n}`] });
  for (let n = 1; n <= probes.parquet.counts['fold-after']!; n++) add('fold', 'parquet', { crashes: [`fold-after:${n}`] });
  const trials = sampleEachKind(all, (t) => t.kind, random);
  expect(new Set(trials.map((t) => t.kind)).size).toBe(10);
  if (LONG_TESTS) expect(trials.length, 'long mode: raise LONG_TRIALS (the time limit)').toBeLessThanOrEqual(LONG_TRIALS);
  console.log(
    `[crash] seed ${SEED} (RELIABILITY_SEED=${SEED} repeats it); ${trials.length} of ${all.length} trials ` +
      `(${trials.map((t) => `${t.kind} ${t.format} ${t.crashes.join('+') || `${t.delayMs} ms`}`).join(', ')}); undisturbed runs: ` +
      (['ndjson', 'parquet'] as const)
        .map((f) => `${f} ${probes[f].ms} ms, ${probes[f].files.size} files, points ${JSON.stringify(probes[f].counts)}`)
        .join('; '),
  );

  const results: { trial: Trial; killed: number; finishedFirst: number; visibleAfterKill: number; ms: number }[] = [];
  const limit = pLimit(2);
  const inProcess = pLimit(1);
  // Every trial runs to its end before the test reports (no child outlives the test's clean-up).
  const settled = await Promise.allSettled(
    trials.map((trial) =>
      limit(async () => {
        const t0 = Date.now();
        const base = join(work.dir, `trial-${trial.n}`);
        const jobFile = await writeJob(base, job(base, trial.format));
        const reference = probes[trial.format].files;
        // --force trials start from a complete export and re-export all of it.
        if (trial.force) await cp(join(probes[trial.format].dir, 'out'), join(base, 'out'), { recursive: true });
        let killed = 0;
        let finishedFirst = 0;
        let visibleAfterKill = 0;
        for (const crash of trial.crashes) {
          const args = ['run', jobFile, ...flags(base), ...(trial.force ? ['--force'] : [])];
          const r: CliResult = await runCli(work.cli, args, {
            env: crash ? { INSIGHT_TEST_CRASH: crash } : {},
            killAfterMs: crash ? undefined : trial.delayMs,
          });
          if (r.signal === 'SIGKILL') killed++;
          else {
            // The crash point was not reached (a run of other timing, or nothing left to recover).
            expect(r.code, `trial ${trial.n} ${crash}: ${r.stderr}`).toBe(0);
            finishedFirst++;
          }
          // What a reader sees right after the crash: only whole files.
          visibleAfterKill += await everyVisibleFileIsWhole(join(base, 'out'));
        }
        // The run after the kills in this process, one at a time: what is checked is the destination it leaves.
        const next = await inProcess(() => runCliInProcess(['run', jobFile, ...flags(base)]));
        expect(next.code, `trial ${trial.n} (${trial.kind} ${trial.crashes.join(' then ')}): next run\n${next.stderr}`).toBe(0);

        const out = join(base, 'out');
        const store = new LocalStore(out);
        const verified = await verifyDestination({ store, job: await loadJob(jobFile) });
        expect(verified.problems, `trial ${trial.n}`).toEqual([]);
        const ids =
          trial.format === 'parquet'
            ? (await duckdb(`SELECT item_id FROM read_parquet(${sqlString(`${out}/**/*.parquet`)})`)).map((r) => r.item_id as string)
            : readNdjsonExport(out).itemIds;
        expect(duplicates(ids), `trial ${trial.n}: duplicate item_ids`).toEqual([]);
        expect(ids.length, `trial ${trial.n}`).toBe(expected.length);
        expect(setDigest(ids), `trial ${trial.n}: item_id set`).toBe(setDigest(expected));
        expect(await fileDigests(out), `trial ${trial.n}: files differ from an undisturbed run`).toEqual(reference);
        // Temp files of killed uploads stay in the store's internal folder, never among the data.
        expect(listFiles(out).filter((f) => f.endsWith('.tmp') && !f.startsWith('.insight-export-tmp/'))).toEqual([]);
        // The next run removed the staging folders the killed runs left on this machine, then its own.
        const staging = join(base, 'staging');
        expect(existsSync(staging) ? readdirSync(staging) : [], `trial ${trial.n}: staging folders left`).toEqual([]);
        results.push({ trial, killed, finishedFirst, visibleAfterKill, ms: Date.now() - t0 });
      }),
    ),
  );
  const failures = settled.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failures.length > 0) {
    console.log(`[crash] seed ${SEED}: ${failures.length} of ${trials.length} trials failed`);
    throw failures[0]!.reason;
  }

  const byKind = new Map<Kind, number>();
  for (const r of results) byKind.set(r.trial.kind, (byKind.get(r.trial.kind) ?? 0) + r.killed);
  const totalKills = results.reduce((n, r) => n + r.killed, 0);
  console.log(
    `[crash] ${results.length} trials, ${totalKills} SIGKILLs (${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}), ` +
      `${results.reduce((n, r) => n + r.finishedFirst, 0)} runs ended before their crash point; ` +
      `${results.reduce((n, r) => n + r.visibleAfterKill, 0)} files checked whole right after kills; ` +
      `each trial compared ${expected.length} rows and ${probes.ndjson.files.size} files; seed ${SEED}`,
  );
  expect(results).toHaveLength(trials.length);
  // At most one crash point in six may be missed (20 of the 24 of all 22 trials).
  const crashRuns = trials.reduce((n, t) => n + t.crashes.length, 0);
  expect(totalKills).toBeGreaterThanOrEqual(crashRuns - Math.floor(crashRuns / 6));
});

/** Every data file a reader could see now is whole (Parquet footer reads, gzip stream ends). Returns how many. */
async function everyVisibleFileIsWhole(out: string): Promise<number> {
  const store = new LocalStore(out);
  const files = listFiles(out).filter((f) => (f.endsWith('.parquet') || f.endsWith('.ndjson.gz')) && !f.startsWith('_state/'));
  for (const f of files) await expect(countRows(store, f), f).resolves.toBeGreaterThanOrEqual(0);
  return files.length;
}

async function fileDigests(out: string): Promise<Map<string, string>> {
  const store = new LocalStore(out);
  const map = new Map<string, string>();
  for await (const o of store.list('')) if (!o.key.startsWith('_state/')) map.set(o.key, o.etag);
  return map;
}

it(
  'S3 destination: SIGKILL mid-upload, around state writes and at random moments; the next run is exact, no partial object',
  // Long mode: the probe and 4 kills, one after another, each with its next run.
  { timeout: longModeTimeout(180_000, 5, 75_000) },
  async () => {
    const random = mulberry32(SEED + 1);
    const env = await s3TestEnv();
    const alice = sandbox.data.wallet('alice.eth')!.address;
    const susd = sandbox.data.contracts.find((c) => c.chainId === 1 && c.symbol === 'SUSD')!.address;
    const expected = [
      ...truthWalletTransactions(sandbox.data, alice, CHAINS, RANGE).map((t) => `${t.chain_id}:${t.hash}:${alice}`),
      ...truthContractEvents(sandbox.data, susd, TRANSFER, [1], RANGE).map((e) => `${e.chain_id}:${e.transaction_hash}:${e.log_index}`),
    ];
    const s3Job = (base: string, prefix: string) => ({
      ...job(base, 'ndjson'),
      output: { format: 'ndjson', destination: `s3://${bucket.bucket}/${prefix}` },
    });

    const probeBase = join(work.dir, 's3-probe');
    const countsFile = join(probeBase, 'counts.json');
    const probe = await runCli(work.cli, ['run', await writeJob(probeBase, s3Job(probeBase, 'probe')), ...flags(probeBase)], {
      env: { ...env, INSIGHT_TEST_COUNTS: countsFile },
    });
    expect(probe.code, probe.stderr).toBe(0);
    const counts = JSON.parse(await readFile(countsFile, 'utf8')) as Record<string, number>;
    const reference = await objectDigests(bucket.store('probe'));
    const pick = (p: string) => `${p}:${1 + Math.floor(random() * counts[p]!)}`;
    // Mid-upload always (what S3 alone can leave: a multipart upload); by default one of the others.
    const others = [pick('state'), pick('state-after'), ''];
    const crashes = LONG_TESTS ? [pick('upload'), ...others] : [pick('upload'), others[Math.floor(random() * others.length)]!];
    let killed = 0;
    let checkedWhole = 0;
    for (const [i, crash] of crashes.entries()) {
      const base = join(work.dir, `s3-trial-${i}`);
      const prefix = `trial-${i}`;
      const jobFile = await writeJob(base, s3Job(base, prefix));
      const r = await runCli(work.cli, ['run', jobFile, ...flags(base)], {
        env: crash ? { ...env, INSIGHT_TEST_CRASH: crash } : env,
        killAfterMs: crash ? undefined : Math.round(300 + random() * probe.ms * 0.8),
      });
      if (r.signal === 'SIGKILL') killed++;
      else expect(r.code, r.stderr).toBe(0);
      // Right after the kill every object a reader can list is whole.
      const store = bucket.store(prefix);
      for await (const o of store.list('')) {
        if (o.key.startsWith('_state/')) continue;
        await expect(countRows(store, o.key), o.key).resolves.toBeGreaterThanOrEqual(0);
        checkedWhole++;
      }
      const next = await runCli(work.cli, ['run', jobFile, ...flags(base)], { env });
      expect(next.code, `S3 trial ${i} (${crash || 'timed'}): ${next.stderr}`).toBe(0);
      expect((await verifyDestination({ store, job: await loadJob(jobFile) })).problems).toEqual([]);
      const local = join(base, 'download');
      await downloadPrefix(bucket.client, bucket.bucket, prefix, local);
      const ids = readNdjsonExport(local).itemIds;
      expect(duplicates(ids)).toEqual([]);
      expect(setDigest(ids)).toBe(setDigest(expected));
      expect(await objectDigests(store)).toEqual(reference);
      const uploads = await bucket.client.send(new ListMultipartUploadsCommand({ Bucket: bucket.bucket, Prefix: `${prefix}/` }));
      expect(uploads.Uploads ?? []).toEqual([]);
    }
    console.log(
      `[crash] S3: ${crashes.length} trials, ${killed} SIGKILLs (${crashes.map((c) => c || 'timed').join(', ')}); ${checkedWhole} objects whole right after kills; each next run exact (${expected.length} rows, ${reference.size} objects equal to an undisturbed run)`,
    );
    expect(killed).toBeGreaterThanOrEqual(crashes.length - 1);
  },
);

async function objectDigests(store: ObjectStore): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  for await (const o of store.list('')) if (!o.key.startsWith('_state/')) map.set(o.key, o.etag);
  return map;
}
