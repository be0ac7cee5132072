/**
 * `plan` says about how many requests a run of the plan sends, by kind: checking the chains (what
 * planning itself sent: a run sends it again), a block per window edge (a pair on the time axis)
 * and a first page per window and target (up to 55 chains per request). Before, it said "at
 * least" one request per window and chain: 240 for a 60-chain job whose run sent 1,109.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { RunReport } from '../../src/run/report.js';
import type { RunEstimate } from '../../src/plan/estimate.js';
import { runCli } from '../helpers/cli-in-process.js';
import { useSandbox } from '../helpers/sandbox.js';
import { useTempDir } from '../helpers/temp-dir.js';

const sandbox = useSandbox({ seed: 42, transactions: 3_000, extraChains: 57 });
const tmp = useTempDir('plan-estimate-');

async function estimateAndRun(name: string, job: Record<string, unknown>): Promise<{ estimate: RunEstimate; sent: number; text: string }> {
  const file = join(tmp.dir, `${name}.yaml`);
  writeFileSync(file, stringify({ name, ...job, output: { format: 'ndjson', ...(job.output as object | undefined) } }));
  const flags = ['--base-url', sandbox.url, '--destination', join(tmp.dir, name), '--log-level', 'silent'];
  const planned = await runCli(['plan', file, '--json', ...flags]);
  expect(planned.code, planned.stderr).toBe(0);
  const estimate = (JSON.parse(planned.stdout) as { estimate: { run: RunEstimate } }).estimate.run;
  const text = (await runCli(['plan', file, ...flags])).stdout.split('\n')[0]!;
  const ran = await runCli(['run', file, '--json', ...flags]);
  expect(ran.code, ran.stderr).toBe(0);
  return { estimate, sent: (JSON.parse(ran.stdout) as RunReport).requests, text };
}

describe('plan estimates the requests of a run', () => {
  it('a past range on 60 chains: within a factor of 1.5 of what the run sends, said by kind', { timeout: 120_000 }, async () => {
    const chains = sandbox.data.chains.map((c) => c.chainId);
    const { estimate, sent, text } = await estimateAndRun('many', {
      source: { base_url: 'sandbox', chains },
      targets: [{ wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] }],
      range: { from: '2024-02-01', to: '2024-02-03', chunk: '1d' },
    });
    console.log(`[plan estimate] 60 chains: estimated ${estimate.total} (${JSON.stringify(estimate)}), the run sent ${sent}`);
    expect(estimate.total).toBe(estimate.checks + estimate.edges + estimate.pages);
    // 60 chains x 2 windows: an edge pair each, and 2 requests of at most 55 chains per window.
    expect(estimate.edges).toBe(60 * 2 * 2);
    expect(estimate.pages).toBe(2 * 2);
    expect(estimate.checks).toBeGreaterThan(0);
    expect(sent / estimate.total).toBeGreaterThan(1 / 1.5);
    expect(sent / estimate.total).toBeLessThan(1.5);
    expect(text).toContain(`about ${estimate.total} requests (${estimate.checks} checking the chains, ${estimate.edges} for window edges`);
  });

  it('the demo-like job (a wallet and token events on 3 chains, by block): within a factor of 1.5', { timeout: 120_000 }, async () => {
    const susd = sandbox.data.contracts.find((c) => c.symbol === 'SUSD' && c.chainId === 1)!.address;
    const first = sandbox.data.chain(1)!.firstBlock;
    const { estimate, sent } = await estimateAndRun('blocks', {
      source: { base_url: 'sandbox', chains: [1] },
      targets: [
        { wallet: sandbox.data.wallets[0]!.address, datasets: ['transactions'] },
        { contract: susd, events: ['Transfer(address indexed from, address indexed to, uint256 value)'] },
      ],
      range: { by: 'block', from: first, to: first + 20_000, chunk: 2_000 },
      // Windows exported one by one: ten edges and first pages (batched, the 10,000-block spans take two or three).
      output: { batch_windows: 'off' },
    });
    // One block per edge on the block axis, shared by the two targets; a first page per window and target.
    expect(estimate.edges).toBe(10);
    expect(estimate.pages).toBe(2 * 10);
    expect(sent / estimate.total).toBeGreaterThan(1 / 1.5);
    expect(sent / estimate.total).toBeLessThan(1.5);
  });

  it('blocks: a request per block of each window, not a page per window', { timeout: 120_000 }, async () => {
    const first = sandbox.data.chain(1)!.firstBlock;
    const { estimate, sent } = await estimateAndRun('headers', {
      source: { base_url: 'sandbox', chains: [1] },
      targets: [{ datasets: ['blocks'] }],
      range: { by: 'block', from: first, to: first + 60, chunk: 20 },
    });
    expect(estimate.pages).toBe(60);
    expect(sent / estimate.total).toBeGreaterThan(1 / 1.5);
    expect(sent / estimate.total).toBeLessThan(1.5);
  });
});
