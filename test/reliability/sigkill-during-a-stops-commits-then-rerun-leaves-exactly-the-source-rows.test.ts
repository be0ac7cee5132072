/**
 * Issue 42, item 6, crash trials of the graceful stop: SIGINT lands in the middle of a day's batch
 * (nothing committed yet), and the run is killed (SIGKILL) while the stop commits what it has
 * received: finishing a file, uploading it, writing a state marker, deleting what a commit
 * replaces or left pending, folding the windows into their unit's manifest. The next run then
 * leaves exactly the source's rows, and verify finds nothing wrong. A seeded sample of the kill
 * points by default (the seed is printed); INSIGHT_EXPORT_LONG_TESTS=1 runs every one.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import { loadJob } from '../../src/job/index.js';
import type { RunReport } from '../../src/run/report.js';
import { verifyDestination } from '../../src/state/verify.js';
import { LocalStore } from '../../src/store/local.js';
import { runCli as runCliInProcess } from '../helpers/cli-in-process.js';
import { RELIABILITY_SEED, longModeTimeout, sampleEachKind } from '../helpers/long-tests.js';
import { mulberry32 } from '../helpers/prng.js';
import { useSandbox } from '../helpers/sandbox.js';
import { truthWalletTransactions, unixDay } from '../helpers/export.js';
import { aliceTransactionsJob, duplicates, readNdjsonExport, runCli, setDigest, useTestCli, writeJob } from './harness.js';

const LATENCY = { fixedMs: 60, jitterMs: 0 };
// About 2,600 of alice's rows a day on each chain: a day's batch is several pages.
const sandbox = useSandbox({ transactions: 100_000, latency: LATENCY });
const work = useTestCli('stop-crash-');
const flags = ['--log-level', 'error', '--json', '--units-in-flight', '1', '--requests-in-flight', '1'];

const transactionRequests = () => sandbox.stats().byRoute.transactions ?? 0;

/** SIGINT once the service has been asked `requests` requests of transactions since the start. */
function stopAfter(requests: number) {
  return (child: ChildProcess) => {
    const from = transactionRequests();
    const poll = setInterval(() => {
      if (transactionRequests() - from < requests) return;
      clearInterval(poll);
      child.kill('SIGINT');
    }, 5);
    child.on('close', () => clearInterval(poll));
  };
}

// Long mode: at most 21 trials (7 points, 3 occurrences each), one after another, each a killed run
// and the next run: 60 s each under load.
const LIMIT = longModeTimeout(900_000, 21, 60_000);
it('SIGKILL while a stop commits what it received: the next run leaves exactly the source rows', { timeout: LIMIT }, async () => {
  let trial = 0;
  const jobAt = async () => {
    const out = join(work.dir, `trial-${trial++}`);
    // One chain and one day (the day the stop lands in): what the stop commits and abandons is all
    // there is, and each trial's next run exports a ninth of what three chains and days would hold.
    return {
      out,
      file: await writeJob(`${out}-job`, {
        ...aliceTransactionsJob(sandbox, 'stop-crash', '1d', out),
        source: { base_url: sandbox.url, chains: [1] },
        range: { from: '2024-02-01', to: '2024-02-02', chunk: '1d' },
      }),
    };
  };
  // A dry run's requests: what a run asks before its first page (the chain checks ask for one row each).
  const dry = await jobAt();
  const from = transactionRequests();
  expect((await runCliInProcess(['run', dry.file, '--dry-run', '--log-level', 'error'])).code).toBe(0);
  const signalAt = transactionRequests() - from + 4;

  // The probe: stopped at the same point, with every crash point counted (all of them during the stop: nothing commits before).
  const probe = await jobAt();
  const countsFile = join(mkdtempSync(join(work.dir, 'counts-')), 'counts.json');
  const probed = await runCli(work.cli, ['run', probe.file, ...flags], {
    env: { INSIGHT_TEST_COUNTS: countsFile },
    onSpawn: stopAfter(signalAt),
  });
  expect(probed.code, probed.stderr).toBe(ExitCode.interrupted);
  const stop = (JSON.parse(probed.stdout) as RunReport).stop!;
  expect(stop.windows_cut).toBeGreaterThan(0);
  expect((JSON.parse(probed.stdout) as RunReport).rows).toBe(stop.rows_committed);
  const counts = JSON.parse(readFileSync(countsFile, 'utf8')) as Record<string, number>;

  const all: [string, number][] = [];
  for (const point of ['encode', 'upload', 'state', 'state-after', 'delete', 'fold', 'fold-after']) {
    const c = counts[point] ?? 0;
    for (const n of new Set([1, Math.ceil(c / 2), c])) if (n >= 1 && n <= c) all.push([point, n]);
  }
  expect(new Set(all.map(([point]) => point))).toEqual(
    new Set(['encode', 'upload', 'state', 'state-after', 'delete', 'fold', 'fold-after']),
  );
  const trials = sampleEachKind(all, ([point]) => point, mulberry32(RELIABILITY_SEED));
  const alice = sandbox.data.wallet('alice.eth')!.address;
  const range = { by: 'time' as const, from: unixDay('2024-02-01'), to: unixDay('2024-02-02') };
  const want = truthWalletTransactions(sandbox.data, alice, [1], range).map((t) => `${t.chain_id}:${t.hash}:${alice}`);
  for (const [point, n] of trials) {
    const t = await jobAt();
    const what = `a SIGKILL at ${point}:${n} during the stop`;
    const killed = await runCli(work.cli, ['run', t.file, ...flags], {
      env: { INSIGHT_TEST_CRASH: `${point}:${n}` },
      onSpawn: stopAfter(signalAt),
    });
    expect(killed.signal, `${what}: ${killed.stderr.slice(-500)}`).toBe('SIGKILL');
    sandbox.setLatency(null);
    // The run after the kill in this process: what is checked is the destination it leaves.
    const next = await runCliInProcess(['run', t.file, '--log-level', 'error', '--json']).finally(() => sandbox.setLatency(LATENCY));
    expect(next.code, `${what}: ${next.stderr.slice(-1000)}`).toBe(0);
    const got = readNdjsonExport(t.out).itemIds;
    expect(duplicates(got), what).toEqual([]);
    expect(setDigest(got), what).toBe(setDigest(want));
    expect((await verifyDestination({ store: new LocalStore(t.out), job: await loadJob(t.file) })).problems, what).toEqual([]);
  }
  console.log(
    `[stop-crash] seed ${RELIABILITY_SEED}: a stop committing ${stop.rows_committed} rows in ${stop.windows_cut} cut windows; ${trials.length} of ${all.length} kill points during its commits, each then exact`,
  );
});
