/**
 * A CDN in front of the service that keeps list answers from before a reorganisation (issue 42,
 * case 4: the run found the reorganisation and exported the windows again from the cache, and
 * `verify --chain-hashes` said ok). Driven through the CLI:
 * - a cache keyed by the URL: the windows exported again ask with a limit keyed by the new
 *   branch's edge (src/run/window-proof.ts), so no cached answer can serve them: the next run
 *   leaves the files equal to a fresh export of the new branch;
 * - a cache that ignores the limit (it answers them all the same): rows at blocks the run resolved
 *   with another hash are refused, and `verify --chain-hashes` compares the newest block of the rows
 *   of every window exported again: it never says ok while the files differ from a fresh export;
 * - the sandbox's own stale cache (list and resolve routes, at a rate): runs while it answers
 *   commit no window with rows of the old branch under an edge of the new one, so once the cache no
 *   longer answers, the next run leaves the files equal to a fresh export.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import { reorganise } from '@insight-export/sandbox';
import type { Sandbox } from '@insight-export/sandbox';
import type { VerifyReport } from '../../src/state/verify.js';
import { startAnswerProxy } from '../helpers/answer-proxy.js';
import { runCli } from '../helpers/cli-in-process.js';
import { readTable, type CanonRow } from '../helpers/export.js';
import { withSandbox } from '../helpers/knob-sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';
import { writeJob } from './harness.js';

const tmp = useTempDir('stale-cache-');
const CHAIN = 8453;

async function run(jobFile: string, ...flags: string[]): Promise<{ code: number; report: RunReport; stderr: string }> {
  const r = await runCli(['run', jobFile, '--json', '--log-level', 'error', ...flags]);
  return { code: r.code, report: JSON.parse(r.stdout) as RunReport, stderr: r.stderr };
}

async function verifyHashes(jobFile: string): Promise<{ code: number; report: VerifyReport }> {
  const r = await runCli(['verify', jobFile, '--chain-hashes', '--json', '--log-level', 'error']);
  return { code: r.code, report: JSON.parse(r.stdout) as VerifyReport };
}

/** The job (alice on chain 8453 up to the head, 6h windows) against `baseUrl`, written to `out`. */
async function aliceJob(sandbox: Sandbox, name: string, baseUrl: string, out: string): Promise<string> {
  return writeJob(join(tmp.dir, name), {
    name,
    source: { base_url: baseUrl, chains: [CHAIN] },
    targets: [{ wallet: sandbox.data.wallet('alice.eth')!.address, datasets: ['transactions'] }],
    range: { from: '2024-02-03', to: 'latest', safety_lag: '0s', chunk: '6h' },
    output: { format: 'ndjson', destination: out },
  });
}

async function contents(out: string): Promise<CanonRow[]> {
  return (await readTable(out, 'transactions', 'ndjson')).sort((a, b) => String(a.item_id).localeCompare(String(b.item_id)));
}

/** A fresh export of the same job straight from the sandbox (the new branch). */
async function fresh(sandbox: Sandbox, name: string): Promise<CanonRow[]> {
  const out = join(tmp.dir, `${name}-fresh`, 'out');
  const jobFile = await aliceJob(sandbox, `${name}-fresh`, sandbox.url, out);
  const r = await run(jobFile);
  expect(r.code, r.stderr).toBe(0);
  return contents(out);
}

describe('a stale cache after a reorganisation', () => {
  for (const cache of ['the URL', 'the URL without its limit'] as const) {
    it(
      `keyed by ${cache}: never a false ok; the files equal a fresh export of the new branch, or verify --chain-hashes names the windows`,
      { timeout: 240_000 },
      async () => {
        await withSandbox({ seed: 7, transactions: 20_000 }, async (sandbox) => {
          const cacheKey = (u: URL) => {
            const q = new URLSearchParams(u.searchParams);
            if (cache !== 'the URL') q.delete('limit');
            return `${u.pathname}?${q.toString()}`;
          };
          const proxy = await startAnswerProxy([sandbox.url], { cacheKey });
          try {
            const name = cache === 'the URL' ? 'url' : 'nolimit';
            const out = join(tmp.dir, name, 'out');
            const jobFile = await aliceJob(sandbox, name, proxy.url, out);
            expect((await run(jobFile)).code).toBe(0);

            reorganise(sandbox.data, CHAIN, 3000);
            proxy.serveCached(true);
            const repair = await run(jobFile);
            expect([0, 1], repair.stderr).toContain(repair.code);
            expect(repair.report.reorgs?.length ?? 0).toBeGreaterThan(0);
            const truth = await fresh(sandbox, name);
            const files = await contents(out);
            const verified = await verifyHashes(jobFile);
            const exact = JSON.stringify(files) === JSON.stringify(truth);
            console.log(
              `[stale cache] keyed by ${cache}: ${proxy.cachedServed} answers from the cache, run exit ${repair.code} ` +
                `(bad_answers ${JSON.stringify(repair.report.bad_answers)}), files ${exact ? 'equal' : 'differ from'} a fresh export, ` +
                `verify --chain-hashes exit ${verified.code}`,
            );
            // Never a false ok.
            if (verified.code === 0) expect(files).toEqual(truth);
            else expect(verified.report.problems.some((p) => p.kind === 'chain-hash')).toBe(true);
            // A cache keyed by the URL cannot answer the windows exported again at all.
            if (cache === 'the URL') {
              expect(repair.code, repair.stderr).toBe(0);
              expect(files).toEqual(truth);
            }
          } finally {
            await proxy.close();
          }
        });
      },
    );
  }

  it(
    "the sandbox's stale cache (list and resolve routes): runs while it answers commit no old-branch rows; once it no longer answers, the next run exports the new branch exactly",
    { timeout: 240_000 },
    async () => {
      await withSandbox({ seed: 7, transactions: 20_000, staleCache: 1 }, async (sandbox) => {
        // The hot wallet, hour by hour (rows in every window), every window within the reorganisation horizon.
        const job = (name: string, out: string) => ({
          name,
          source: { base_url: sandbox.url, chains: [CHAIN] },
          targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
          range: { from: '2024-02-03', to: 'latest', safety_lag: '0s', chunk: '1h', reorg_horizon: 100_000 },
          output: { format: 'ndjson', destination: out, batch_windows: 'off' },
        });
        const out = join(tmp.dir, 'knob', 'out');
        const jobFile = await writeJob(join(tmp.dir, 'knob'), job('knob', out));
        expect((await run(jobFile)).code).toBe(0);
        // About 16 hours of chain 8453 replaced; half the answers whose URL was asked before come from the cache.
        reorganise(sandbox.data, CHAIN, 30_000);
        sandbox.setInconsistencies({ staleCache: 0.5 });
        const codes: number[] = [];
        for (let i = 0; i < 4; i++) {
          const r = await run(jobFile);
          expect([0, 1], r.stderr).toContain(r.code);
          codes.push(r.code);
        }
        const stale = sandbox.stats().inconsistencies.staleCache ?? 0;
        expect(stale).toBeGreaterThan(0);
        sandbox.consistent();
        const truthOut = join(tmp.dir, 'knob-fresh', 'out');
        expect((await run(await writeJob(join(tmp.dir, 'knob-fresh'), job('knob-fresh', truthOut)))).code).toBe(0);
        const truth = await contents(truthOut);
        const verified = await verifyHashes(jobFile);
        if (verified.code === 0) expect(await contents(out)).toEqual(truth);
        const next = await run(jobFile);
        expect(next.code, next.stderr).toBe(0);
        expect(await contents(out)).toEqual(truth);
        console.log(
          `[stale cache] sandbox at 0.5: ${stale} stale answers over 4 runs (exit ${codes.join(', ')}); verify exit ${verified.code}; the next run exact`,
        );
      });
    },
  );
});
