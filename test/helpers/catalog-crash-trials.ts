/**
 * The SIGKILL trials of a commit through the sandbox's Iceberg REST catalog (issue 44 item 1), for
 * a local destination or an S3 one (radosgw) whose catalog keeps its metadata files on S3. One test
 * file per destination calls `catalogCrashTrials`: the trial files say what each proves.
 */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CatalogExchange } from '@insight-export/sandbox';
import type { ObjectStore } from '../../src/store/store.js';
import { LocalStore } from '../../src/store/local.js';
import type { VerifyReport } from '../../src/state/verify.js';
import { withProcessEnv, writeObjectTo } from './catalog-on-s3.js';
import { restSpec } from './catalog-sandbox.js';
import { expectWholeWindows as expectWholeWindowsOf } from './whole-windows.js';
import { runCli as runCliInProcess } from './cli-in-process.js';
import { freshExportRows, icebirdRows, sortedRows } from './iceberg.js';
import { LONG_TESTS, longModeTimeout, RELIABILITY_SEED as SEED, sampleEachKind } from './long-tests.js';
import { mulberry32 } from './prng.js';
import { s3TestEnv, useTestBucket } from './s3.js';
import { useSandbox } from './sandbox.js';
import { ALICE_AND_TRANSFERS_TABLES, aliceAndTransfersIcebergJob, runCli, useTestCli, writeJob } from '../reliability/harness.js';

type Mode = 'append' | 'force';
type Phase = 'a write of the snapshot files' | 'before the commit request' | 'commit applied, no answer';
interface Trial {
  mode: Mode;
  env: Record<string, string>;
  /** Where the kill lies in the commit. */
  phase: Phase;
  point: string;
  /** The catalog commits (1-based) whose answers the sandbox drops before the killed run ends. */
  dropAnswers?: number;
}

const TABLES = ALICE_AND_TRANSFERS_TABLES;
/** The most trials the long mode's time limit is sized for (20 s each, both modes' probes included). */
const LONG_TRIALS = 60;
const FIRST_END = '2024-02-02';
const END = '2024-02-04';

/** A row's block_time in microseconds. */
const blockTime = (row: string) => Number(Object.fromEntries(JSON.parse(row) as [string, string][]).block_time);

const fileKind = (key: string) => (/\/metadata\/snap-[^/]+\.avro$/.test(key) ? 'manifest list' : /\.avro$/.test(key) ? 'manifest' : key);

function trialsOf(mode: Mode, p: { writes: string[]; commits: number }): Trial[] {
  const trials: Trial[] = [];
  p.writes.forEach((key, i) => {
    for (const [point, when] of [
      ['table', 'before'],
      ['table-after', 'after'],
    ] as const)
      trials.push({
        mode,
        env: { INSIGHT_TEST_CRASH: `${point}:${i + 1}` },
        phase: 'a write of the snapshot files',
        point: `${when} ${fileKind(key)} ${i + 1}`,
      });
  });
  for (let n = 1; n <= p.commits; n++) {
    trials.push({ mode, env: { INSIGHT_TEST_CATALOG_CRASH: `commit:${n}` }, phase: 'before the commit request', point: `commit ${n}` });
    trials.push({
      mode,
      env: { INSIGHT_TEST_CATALOG_CRASH: `commit-after:${n}` },
      phase: 'commit applied, no answer',
      point: `commit ${n}`,
      dropAnswers: n,
    });
  }
  return trials;
}

export interface CatalogCrashTrialsOptions {
  /** The destination: a local folder, or an S3 prefix (radosgw) with the catalog's metadata there too. */
  on: 'local' | 's3';
  /**
   * Which phases the default (sampled) mode draws a point of; a phase's point is drawn among the
   * trials of `defaultModes`. LONG_TESTS runs every point of both modes.
   */
  defaultPhases: readonly Phase[];
  defaultModes: readonly Mode[];
}

/**
 * Registers the file's test: each trial's first run, the killed second run, the tables checked
 * right after the kill, the next run, each table a fresh export with one snapshot per run that
 * changed it, and `verify` through the catalog ok. Every catalog exchange validates against the spec.
 */
export function catalogCrashTrials(opts: CatalogCrashTrialsOptions): void {
  const s3 = opts.on === 's3';
  const bucket = s3 ? useTestBucket('catalog-kill') : undefined;
  const exchanges: CatalogExchange[] = [];
  const sandbox = useSandbox({
    seed: 39,
    transactions: 4_000,
    catalog: {
      onExchange: (e) => exchanges.push(e),
      ...(bucket
        ? {
            writeObject: writeObjectTo(bucket),
          }
        : {}),
    },
  });
  const work = useTestCli(s3 ? 'catalog-sigkill-s3-' : 'catalog-sigkill-');
  let s3Env: Record<string, string> = {};

  /** Where a trial's tables go, and the store reading them back. */
  const destination = (base: string, ns: string) => (bucket ? `s3://${bucket.bucket}/${ns}` : join(base, 'out'));
  const storeOf = (out: string, ns: string): ObjectStore => (bucket ? bucket.store(ns) : new LocalStore(out));

  function job(ns: string, to: string, dest: string): Record<string, unknown> {
    const j = aliceAndTransfersIcebergJob(sandbox, 'catkill', to, '1d', dest);
    return { ...j, output: { ...j.output, catalog: { uri: sandbox.catalog.url, namespace: ns } } };
  }

  /** Rows of each table of a fresh export up to END (the Parquet engine, read by DuckDB), and of its windows before FIRST_END. */
  const truth: Record<string, Record<string, string[]>> = { [FIRST_END]: {} };
  beforeAll(async () => {
    if (bucket) s3Env = await s3TestEnv();
    const dir = join(work.dir, 'truth');
    truth[END] = await freshExportRows({ job: aliceAndTransfersIcebergJob(sandbox, 'catkill', END, '1d', join(dir, 'out')), dir }, TABLES);
    const firstEnd = Date.parse(FIRST_END) * 1000;
    for (const table of TABLES) {
      truth[FIRST_END]![table] = truth[END]![table]!.filter((r) => blockTime(r) < firstEnd);
      expect(truth[FIRST_END]![table]!.length, table).toBeGreaterThan(0);
      expect(truth[END]![table]!.length, table).toBeGreaterThan(truth[FIRST_END]![table]!.length);
    }
  });

  afterAll(() => {
    const problems = exchanges.flatMap((e) => restSpec().problems(e));
    expect(problems, `${exchanges.length} catalog exchanges`).toEqual([]);
  });

  interface CatalogTable {
    'metadata-location': string;
    metadata: { 'current-snapshot-id'?: number | null; snapshots?: { 'snapshot-id': number; 'parent-snapshot-id'?: number }[] };
  }

  async function loadTable(ns: string, table: string): Promise<CatalogTable> {
    const res = await fetch(`${sandbox.catalog.url}/v1/namespaces/${ns}/tables/${table}`);
    expect(res.status, `${ns}.${table}`).toBe(200);
    return (await res.json()) as CatalogTable;
  }

  async function catalogRows(out: string, ns: string, table: string): Promise<string[]> {
    const loaded = await loadTable(ns, table);
    if (bucket) expect(loaded['metadata-location'], table).toMatch(new RegExp(`^s3://${bucket.bucket}/${ns}/${table}/metadata/`));
    return sortedRows(await icebirdRows(storeOf(out, ns), table, basename(loaded['metadata-location'])));
  }

  /** Rows of whole windows only, none twice, none unknown, none of the first run lost. */
  const expectWholeWindows = (rows: string[], table: string, name: string) =>
    expectWholeWindowsOf(rows, { all: truth[END]![table]!, first: truth[FIRST_END]![table]! }, `${name} ${table}`);

  const flags = (base: string) => ['--staging-dir', join(base, 'staging'), '--log-level', 'error'];

  /** The first run (up to FIRST_END), then the run up to END with `env` (killed, or the probe). */
  async function firstRunThen(base: string, ns: string, mode: Mode, env: Record<string, string>, dropAnswers = 0) {
    const out = destination(base, ns);
    const first = await runCli(work.cli, ['run', await writeJob(base, job(ns, FIRST_END, out), 'first.yaml'), ...flags(base)], {
      env: s3Env,
    });
    expect(first.code, first.stderr).toBe(0);
    const jobFile = await writeJob(base, job(ns, END, out));
    sandbox.catalog.set({ dropCommitAnswers: dropAnswers });
    const second = await runCli(work.cli, ['run', jobFile, ...flags(base), ...(mode === 'force' ? ['--force'] : [])], {
      env: { ...s3Env, ...env },
    });
    sandbox.catalog.set({ dropCommitAnswers: 0 });
    return { out, jobFile, second };
  }

  /** The keys of the table writes and the number of catalog commits of an undisturbed second run. */
  async function probe(mode: Mode): Promise<{ writes: string[]; commits: number }> {
    const base = join(work.dir, `probe-${mode}`);
    const env = { INSIGHT_TEST_TABLE_WRITES: join(base, 'writes.json'), INSIGHT_TEST_CATALOG_COMMITS: join(base, 'commits.json') };
    const { second } = await firstRunThen(base, `probe_${mode}`, mode, env);
    expect(second.code, second.stderr).toBe(0);
    const writes = JSON.parse(await readFile(env.INSIGHT_TEST_TABLE_WRITES, 'utf8')) as string[];
    const { commits } = JSON.parse(await readFile(env.INSIGHT_TEST_CATALOG_COMMITS, 'utf8')) as { commits: number };
    return { writes, commits };
  }

  /** `verify` of the job through the catalog, in the test's process. */
  async function verify(jobFile: string): Promise<{ code: number; report: VerifyReport }> {
    const argv = ['verify', jobFile, '--catalog-uri', sandbox.catalog.url, '--base-url', sandbox.url, '--json'];
    const r = await withProcessEnv(s3Env, () => runCliInProcess(argv));
    return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport };
  }

  async function runTrial(trial: Trial, n: number): Promise<void> {
    const name = `${trial.mode}: ${trial.phase}, ${trial.point}`;
    const base = join(work.dir, `trial-${n}`);
    const ns = `trial_${n}`;
    const { out, jobFile, second: killed } = await firstRunThen(base, ns, trial.mode, trial.env, trial.dropAnswers);
    expect(killed.signal, `${name}: ${killed.stderr}`).toBe('SIGKILL');
    for (const table of TABLES) expectWholeWindows(await catalogRows(out, ns, table), table, `${name}, right after the kill`);

    const next = await runCli(work.cli, ['run', jobFile, ...flags(base)], { env: s3Env });
    expect(next.code, `${name}: next run\n${next.stderr}`).toBe(0);
    for (const table of TABLES) {
      expect(await catalogRows(out, ns, table), `${name} ${table}`).toEqual(truth[END]![table]);
      // One snapshot for the first run and one for the windows after it (or the --force overwrite):
      // the killed run's, if it landed, is the one the next run kept; main's history has them both.
      const { metadata } = await loadTable(ns, table);
      const snapshots = metadata.snapshots ?? [];
      expect(snapshots, `${name} ${table}: snapshots`).toHaveLength(2);
      expect(metadata['current-snapshot-id'], `${name} ${table}`).toBe(snapshots[1]!['snapshot-id']);
      expect(snapshots[1]!['parent-snapshot-id'], `${name} ${table}`).toBe(snapshots[0]!['snapshot-id']);
    }
    const verified = await verify(jobFile);
    expect(verified.report.problems, `${name}: verify through the catalog`).toEqual([]);
    expect(verified.code, name).toBe(0);
  }

  /**
   * Every point, from a probe of each mode (the writes of its commits, in order); by default no
   * probe: a write among the first 2 per table (each table's commit writes at least a manifest and
   * its manifest list), so that one point of each default phase costs three runs.
   */
  async function allTrials(): Promise<Trial[]> {
    const all: Trial[] = [];
    for (const mode of LONG_TESTS ? (['append', 'force'] as const) : opts.defaultModes) {
      const p = LONG_TESTS
        ? await probe(mode)
        : { writes: Array.from({ length: 2 * TABLES.length }, () => 'a table file'), commits: TABLES.length };
      expect(p.writes.length).toBeGreaterThanOrEqual(2 * TABLES.length);
      expect(p.commits).toBe(TABLES.length);
      all.push(...trialsOf(mode, p));
    }
    expect(all.length, "trials: raise LONG_TRIALS sized for the long mode's time limit").toBeLessThanOrEqual(LONG_TRIALS);
    return LONG_TESTS ? all : all.filter((t) => opts.defaultPhases.includes(t.phase));
  }

  const where = s3 ? "on S3 (the catalog's metadata on S3 too)" : 'on a local destination';
  const points = LONG_TESTS ? 'every point' : `one point of each of ${opts.defaultPhases.length} phases`;
  it(
    `SIGKILL at ${points} of a catalog commit ${where}, then the next run leaves each table a fresh export and verify says ok`,
    { timeout: longModeTimeout(600_000, LONG_TRIALS, 20_000) },
    async () => {
      const all = await allTrials();
      const trials = sampleEachKind(all, (t) => t.phase, mulberry32(SEED));
      console.log(
        `[catalog sigkill ${opts.on}] seed ${SEED} (RELIABILITY_SEED=${SEED} repeats it); ${trials.length} of ${all.length} points: ` +
          trials.map((t) => `${t.mode} ${t.phase} (${t.point})`).join(', '),
      );
      // One at a time: the dropped answers are a knob of the one sandbox all trials share.
      for (const [n, trial] of trials.entries()) await runTrial(trial, n);
    },
  );
}
